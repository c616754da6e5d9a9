// @needs keystone
/**
 * The ControlPlane driver against a real Keystone: the admin logs in with a real token, a wrong password reports
 * AuthenticationFailed until the Secret is fixed, a Keystone nobody answers at reports KeystoneUnreachable.
 */
import { createServer, type AddressInfo } from 'node:net';
import { API_VERSION, type ControlPlane } from '../../src/api';
import { keystoneAdmins, reconcileControlPlane, type ClosableKeystoneAdmins } from '../../src/plane';
import { keystoneTestEnv } from '../support/keystone-fixtures';
import { FakeCluster, condition } from '../unit/plane/fakes';

const env = keystoneTestEnv();
const key = { namespace: 'cp-system', name: 'cp' };

function cloudsYaml(password: string): string {
  return [
    'clouds:',
    '  admin:',
    '    auth:',
    `      auth_url: ${env.authUrl}`,
    `      username: ${env.adminUser}`,
    `      password: "${password}"`,
    `      project_name: ${env.adminProject}`,
    `      user_domain_name: ${env.domain}`,
    `      project_domain_name: ${env.domain}`,
    '',
  ].join('\n');
}

function controlPlane(authURL = env.authUrl): ControlPlane {
  return {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { name: 'cp', namespace: 'cp-system' },
    spec: { services: { keystone: { external: { authURL } } }, adminCredential: { cloudCredentialsRef: { secretName: 'admin-cloud' } } },
  };
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('ControlPlane against a real Keystone', () => {
  let admins: ClosableKeystoneAdmins;
  beforeAll(() => {
    admins = keystoneAdmins({ timeoutMs: 5000 });
  });
  afterAll(async () => {
    await admins.close();
  });

  test('a wrong admin password reports AuthenticationFailed; the fixed Secret turns it Ready with the Keystone version', async () => {
    const cluster = new FakeCluster();
    cluster.put('ControlPlane', controlPlane());
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: 'cp-system' }, data: { 'clouds.yaml': cloudsYaml('wrong-password') } });
    const deps = { cluster, keystone: admins };
    await reconcileControlPlane(key, deps);
    expect(condition(cluster.object('ControlPlane', key), 'AdminCredentialReady')).toMatchObject({
      status: 'False',
      reason: 'AuthenticationFailed',
      message: expect.stringContaining('401'),
    });
    expect(JSON.stringify(cluster.object('ControlPlane', key))).not.toContain('wrong-password');
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: 'cp-system' }, data: { 'clouds.yaml': cloudsYaml(env.adminPassword) } });
    await reconcileControlPlane(key, deps);
    const cp = cluster.object('ControlPlane', key);
    expect(condition(cp, 'AdminCredentialReady')).toMatchObject({ status: 'True', reason: 'AdminCredentialReady' });
    expect(condition(cp, 'Ready')).toMatchObject({ status: 'True' });
    expect(cp?.status?.keystoneVersion).toMatch(/^v3\.\d+$/);
  });

  test('KeystoneUnreachable: nothing answers at the auth URL', async () => {
    const cluster = new FakeCluster();
    cluster.put('ControlPlane', controlPlane(`http://127.0.0.1:${await closedPort()}/v3`));
    cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: 'cp-system' }, data: { 'clouds.yaml': cloudsYaml(env.adminPassword) } });
    const result = await reconcileControlPlane(key, { cluster, keystone: admins });
    expect(condition(cluster.object('ControlPlane', key), 'AdminCredentialReady')).toMatchObject({ status: 'False', reason: 'KeystoneUnreachable', message: expect.stringContaining('ECONNREFUSED') });
    expect(result.requeueAfter).toBe(30_000);
  });
});
