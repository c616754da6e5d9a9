/**
 * The ControlPlane (identity-plane.md, ControlPlane): AdminCredentialReady with each of its reasons, keystoneVersion and
 * Ready, through the driver on in-memory ports.
 */
import { reconcileControlPlane } from '../../../src/plane';
import { ADMIN_PASSWORD, AUTH_URL, CP_NS, FakeCluster, FakeKeystone, T0, adminCloudsYaml, condition, controlPlane, keystoneError } from './fakes';

/** A self-signed CA certificate (public part only), for a bundle that parses. */
const TEST_CA = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBjDCCATOgAwIBAgIUU1JF2IHJEiK3NqOmEqiC1+Xx740wCgYIKoZIzj0EAwIw',
  'GzEZMBcGA1UEAwwQa2FjLXVuaXQtdGVzdC1jYTAgFw0yNjEyMDMwNjU3MDdaGA8y',
  'MTI2MTEwOTA2NTcwN1owGzEZMBcGA1UEAwwQa2FjLXVuaXQtdGVzdC1jYTBZMBMG',
  'ByqGSM49AgEGCCqGSM49AwEHA0IABIvKtGFvqPQGT3qY88zepjoIX8PplEN/J/pA',
  'dX5FqS7prYJi7xBcl39GQInrilWVK0yrai2OASkaAmFJNwayPz+jUzBRMB0GA1Ud',
  'DgQWBBTDUeuD+BblA2pL+PU6Vy+JX9dxyjAfBgNVHSMEGDAWgBTDUeuD+BblA2pL',
  '+PU6Vy+JX9dxyjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCICPS',
  '3YVjCD3mWDYt09sEjwMMb8ibECyLK5QK1rEcuL/EAiA7ZVCaiLTf74KCrNlRgfXE',
  'QozCo5500INtZucfNUC8MQ==',
  '-----END CERTIFICATE-----',
].join('\n');

const key = { namespace: CP_NS, name: 'cp' };

function setup(cp = controlPlane()) {
  const cluster = new FakeCluster();
  const keystone = new FakeKeystone();
  cluster.put('ControlPlane', cp);
  return { cluster, keystone, deps: { cluster, keystone, clock: () => T0 } };
}

const admin = (cluster: FakeCluster) => condition(cluster.object('ControlPlane', key), 'AdminCredentialReady');

describe('AdminCredentialReady', () => {
  it('AdminCredentialReady: the admin logs in with a real token; keystoneVersion and Ready are reported', async () => {
    const { cluster, keystone, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
    const result = await reconcileControlPlane(key, deps);
    const cp = cluster.object('ControlPlane', key);
    expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady' });
    expect(condition(cp, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
    expect(cp?.status).toMatchObject({ keystoneVersion: 'v3.14', observedGeneration: 1 });
    expect(keystone.calls).toEqual(['verify']);
    expect(keystone.connection).toMatchObject({ authUrl: 'https://keystone.example.com/v3', cloud: { user: { name: 'admin', domainName: 'Default' }, project: { name: 'admin' } } });
    expect(result.requeueAfter).toBeUndefined();
  });

  it('WaitingForCloudsYaml: the Secret is missing', async () => {
    const { cluster, keystone, deps } = setup();
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'WaitingForCloudsYaml', message: 'Secret admin-cloud not found in namespace cp-system' });
    expect(condition(cluster.object('ControlPlane', key), 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForCloudsYaml' });
    expect(keystone.calls).toEqual([]);
  });

  it('WaitingForCloudsYaml: the key clouds.yaml is missing or empty', async () => {
    const { cluster, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { other: 'x' } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ reason: 'WaitingForCloudsYaml', message: expect.stringContaining('no key clouds.yaml') });
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': ' ' } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ reason: 'WaitingForCloudsYaml' });
  });

  it.each([
    ['not YAML', 'clouds: [unclosed', 'not YAML'],
    ['no clouds map', 'foo: 1', 'no "clouds" map'],
    ['no cloud of cloudName', adminCloudsYaml('x', 'other'), 'defines no cloud "admin" (it defines "other")'],
    ['another auth_type', 'clouds:\n  admin:\n    auth_type: v3token\n    auth: {}\n', 'has auth_type v3token; it must be a password cloud (auth_type password) or an application credential (auth_type v3applicationcredential)'],
    ['an application credential without its secret or id', 'clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth: {}\n', 'lacks auth.application_credential_secret, auth.application_credential_id (or auth.application_credential_name with auth.username or auth.user_id)'],
    ['an application credential by name without its user', 'clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth: {application_credential_name: a, application_credential_secret: s}\n', 'lacks auth.username (or auth.user_id)'],
    ['no password or project', 'clouds:\n  admin:\n    auth:\n      username: admin\n', 'lacks auth.password, auth.project_name'],
  ])('CloudsYamlError: %s', async (_name, document, message) => {
    const { cluster, keystone, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': document } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'CloudsYamlError', message: expect.stringContaining(message) });
    expect(keystone.calls).toEqual([]);
  });

  it('cloudCredentialsRef.cloudName selects the cloud', async () => {
    const { cluster, deps } = setup(controlPlane({ spec: { adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud', cloudName: 'ops' } } } }));
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml(undefined, 'ops') } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'True' });
  });

  it('WaitingForCABundle: the CA bundle Secret or its key is missing, empty or holds no certificate', async () => {
    const spec = { services: { keystone: { external: { authURL: 'https://keystone.example.com/v3', caBundleSecretRef: { name: 'ca' } } } } };
    const { cluster, keystone, deps } = setup(controlPlane({ spec }));
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ reason: 'WaitingForCABundle', message: expect.stringContaining('Secret ca not found') });
    cluster.putSecret({ metadata: { name: 'ca', namespace: CP_NS }, data: { 'ca.crt': '' } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ reason: 'WaitingForCABundle', message: expect.stringContaining('no key ca.crt') });
    expect(keystone.calls).toEqual([]);
    // Text that is not a certificate would be dropped by TLS without a word: it is named here instead.
    for (const garbage of ['not a certificate', '-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----']) {
      cluster.putSecret({ metadata: { name: 'ca', namespace: CP_NS }, data: { 'ca.crt': garbage } });
      await reconcileControlPlane(key, deps);
      expect(admin(cluster)).toMatchObject({ reason: 'WaitingForCABundle', message: 'CA bundle Secret ca key ca.crt holds no PEM certificate' });
    }
    expect(keystone.calls).toEqual([]);
    cluster.putSecret({ metadata: { name: 'ca', namespace: CP_NS }, data: { 'ca.crt': `garbage first\n${TEST_CA}\n` } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'True' });
    expect(keystone.connection?.caBundle).toBe(`garbage first\n${TEST_CA}\n`);
  });

  it('AuthenticationFailed: Keystone refuses the admin password; a fixed Secret is re-checked and turns Ready', async () => {
    const { cluster, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml('wrong') } });
    const failed = await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'AuthenticationFailed', message: expect.stringContaining('401') });
    expect(failed.requeueAfter).toBeGreaterThan(0);
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady' });
  });

  it('KeystoneUnreachable: no answer (connection, timeout, 5xx), retried soon', async () => {
    const { cluster, keystone, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
    keystone.unreachable = true;
    const result = await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'KeystoneUnreachable' });
    expect(result.requeueAfter).toBe(30_000);
    keystone.unreachable = false;
    keystone.failNext('verify', keystoneError('server', 503));
    await reconcileControlPlane(key, deps);
    expect(admin(cluster)).toMatchObject({ reason: 'KeystoneUnreachable' });
  });

  it('a pass that changes nothing writes nothing, and lastTransitionTime changes only with the status', async () => {
    const { cluster, deps } = setup();
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
    await reconcileControlPlane(key, deps);
    const writes = cluster.writes.length;
    const again = await reconcileControlPlane(key, { ...deps, clock: () => new Date(T0.getTime() + 60_000) });
    expect(again.wroteStatus).toBe(false);
    expect(cluster.writes.length).toBe(writes);
    expect(admin(cluster)?.lastTransitionTime).toBe('2026-12-01T00:00:00Z');
  });

  describe('an admin application credential (issue 42)', () => {
    const byId = (secret = ADMIN_PASSWORD) =>
      `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: ${AUTH_URL}\n      application_credential_id: ac-1\n      application_credential_secret: ${secret}\n`;
    const byName = `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_name: plane-admin\n      application_credential_secret: ${ADMIN_PASSWORD}\n      username: admin\n      user_domain_name: Default\n`;
    const DAY = 86_400_000;
    const at = (ms: number) => new Date(T0.getTime() + ms);

    function appCredSetup(document: string, expiresAt?: Date) {
      const s = setup();
      s.keystone.adminCredential = { id: 'ac-1', name: 'plane-admin', ...(expiresAt ? { expiresAt } : {}) };
      s.cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': document } });
      return s;
    }

    it('by id and secret, or by name and user: Ready, naming the credential; one that never expires records no expiry', async () => {
      for (const document of [byId(), byName]) {
        const { cluster, keystone, deps } = appCredSetup(document);
        const result = await reconcileControlPlane(key, deps);
        expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady', message: expect.stringContaining('as the admin application credential plane-admin (ac-1), which never expires') });
        expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBeUndefined();
        expect(result.requeueAfter).toBeUndefined();
        const cloud = keystone.connection?.cloud;
        expect(cloud && 'credential' in cloud ? cloud.credential : undefined).toEqual(document === byName ? { name: 'plane-admin', user: { name: 'admin', domainName: 'Default' } } : { id: 'ac-1' });
      }
    });

    it('an expiry more than a week away: Ready, recorded, woken when the week before it starts', async () => {
      const { cluster, deps } = appCredSetup(byId(), at(30 * DAY));
      const result = await reconcileControlPlane(key, deps);
      expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady', message: expect.stringContaining('which expires at 2026-12-31T00:00:00Z') });
      expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBe('2026-12-31T00:00:00Z');
      expect(result).toMatchObject({ requeueAfter: 23 * DAY, steady: true });
    });

    it('AdminCredentialExpiring within a week of it: still True (the plane works), what to do, woken at the expiry', async () => {
      const { cluster, deps } = appCredSetup(byId(), at(30 * DAY));
      await reconcileControlPlane(key, deps);
      const result = await reconcileControlPlane(key, { ...deps, clock: () => at(23 * DAY) });
      expect(admin(cluster)).toMatchObject({
        status: 'True',
        reason: 'AdminCredentialExpiring',
        message: expect.stringContaining('which expires at 2026-12-31T00:00:00Z: create its successor (openstack application credential create) and put it into the admin Secret before then'),
      });
      expect(condition(cluster.object('ControlPlane', key), 'Ready')).toMatchObject({ status: 'True' });
      expect(result).toMatchObject({ requeueAfter: 7 * DAY, steady: true });
    });

    it('expired: Keystone refuses it, and AuthenticationFailed says it expired; a successor in the Secret turns it Ready', async () => {
      const { cluster, keystone, deps } = appCredSetup(byId(), at(30 * DAY));
      await reconcileControlPlane(key, deps);
      keystone.failNext('verify', keystoneError('unauthorized', 401, 'The request you have made requires authentication.'));
      await reconcileControlPlane(key, { ...deps, clock: () => at(30 * DAY + 1000) });
      expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'AuthenticationFailed', message: expect.stringMatching(/^the admin application credential expired at 2026-12-31T00:00:00Z: .*401/) });
      expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBe('2026-12-31T00:00:00Z');
      keystone.adminCredential = { id: 'ac-2', name: 'plane-admin-2', expiresAt: at(120 * DAY) };
      cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': byId().replace('ac-1', 'ac-2') } });
      await reconcileControlPlane(key, { ...deps, clock: () => at(31 * DAY) });
      expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady', message: expect.stringContaining('plane-admin-2 (ac-2)') });
      expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBe('2027-03-31T00:00:00Z');
    });

    it('a wrong secret before the expiry is a plain AuthenticationFailed, and the recorded expiry goes (it was another credential\'s)', async () => {
      const { cluster, deps } = appCredSetup(byId(), at(30 * DAY));
      await reconcileControlPlane(key, deps);
      cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': byId('wrong') } });
      await reconcileControlPlane(key, deps);
      expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'AuthenticationFailed', message: expect.not.stringContaining('expired') });
      expect(cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt).toBeUndefined();
    });

    it('a Keystone blip keeps the recorded expiry (issue 46, finding 4): no answer, a 5xx, a login not attempted, the Secret unreadable', async () => {
      const { cluster, keystone, deps } = appCredSetup(byId(), at(30 * DAY));
      await reconcileControlPlane(key, deps);
      const expiry = () => cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt;
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      keystone.unreachable = true;
      await reconcileControlPlane(key, { ...deps, clock: () => at(DAY) });
      expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'KeystoneUnreachable' });
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      keystone.unreachable = false;
      keystone.failNext('verify', keystoneError('server', 503));
      await reconcileControlPlane(key, { ...deps, clock: () => at(DAY + 1000) });
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: {} });
      await reconcileControlPlane(key, { ...deps, clock: () => at(DAY + 2000) });
      expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'WaitingForCloudsYaml' });
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      // Keystone answers again: Ready, the same expiry, no write for it
      cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': byId() } });
      await reconcileControlPlane(key, { ...deps, clock: () => at(DAY + 3000) });
      expect(admin(cluster)).toMatchObject({ status: 'True', reason: 'AdminCredentialReady' });
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
    });

    // The simulation (seed 460001, schedule 40): a watch that resumed further back replayed the ControlPlane as it was
    // before its first status, during a Keystone outage; the pass on that copy decided a status without the expiry, and
    // its write, conditioned on the newer copy's resourceVersion, dropped the recorded expiry and its gauge series.
    it('a pass on a copy older than the API server\'s (a cache behind) loses its status write (409) instead of dropping the recorded expiry', async () => {
      const { cluster, keystone, deps } = appCredSetup(byId(), at(30 * DAY));
      const before = cluster.object('ControlPlane', key);
      await reconcileControlPlane(key, deps);
      const expiry = () => cluster.object('ControlPlane', key)?.status?.adminCredentialExpiresAt;
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      keystone.unreachable = true;
      cluster.behind('ControlPlane', key, before as NonNullable<typeof before>);
      await expect(reconcileControlPlane(key, { ...deps, clock: () => at(DAY) })).rejects.toThrow(/409 Conflict/);
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
      // The next pass reads the API server's copy: the outage reported, the expiry kept.
      await reconcileControlPlane(key, { ...deps, clock: () => at(DAY + 1000) });
      expect(admin(cluster)).toMatchObject({ status: 'False', reason: 'KeystoneUnreachable' });
      expect(expiry()).toBe('2026-12-31T00:00:00Z');
    });

    it('a steady pass writes nothing: the messages carry times, never a countdown', async () => {
      const { cluster, deps } = appCredSetup(byId(), at(3 * DAY));
      await reconcileControlPlane(key, deps);
      const writes = cluster.writes.length;
      const again = await reconcileControlPlane(key, { ...deps, clock: () => at(DAY) });
      expect(again.wroteStatus).toBe(false);
      expect(cluster.writes.length).toBe(writes);
    });
  });
});
