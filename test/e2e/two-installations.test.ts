// @needs kube target-kube keystone openbao
/**
 * Ownership on the operator (issue 32): two installations, each a management cluster of its own (the two API servers of
 * the test environment, each with its own operator as a child process under the construct's RBAC), one Keystone, one
 * OpenBao, and the same ControlPlane, user, project and order namespace and name on both, as a migration to a new
 * cluster that runs beside the old one has them. The second cluster's identity plane takes the Keystone user and
 * project over by the ownership markers (docs/concepts/ownership.md), which changes the user's password: the first cluster's
 * orders cannot log in until its user order sets a password again, which is how the test hands the user back and forth.
 *
 * Both orders reach Ready at the generation their spec asks for; B reports A's credential under its names
 * (`ForeignCredential`, a Warning Event naming it) and mints its own beside it. A consumer probe on each cluster's
 * Secret never fails while the other rotates twice and is torn down; each backup holds its own cluster's credential;
 * each teardown deletes only its own credentials.
 *
 * A tenant of cluster A who may edit Secrets in the order's namespace (the limited user, given a Role there) writes B's
 * credential id into A's delivered Secret, the secret left as it is (issue 39): A repairs the Secret and reports it in a
 * Warning Event naming the Secret and the id, never records the id, then rotates and sweeps twice; B's credential
 * stays in Keystone and B's consumer probe never fails.
 */
import { childPrefix } from '../../src/api';
import { OpenBaoBackup } from '../../src/backup/openbao';
import { Users } from '../../src/keystone';
import { ownerMarker } from '../../src/plane/naming';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Probe } from '../support/credential-fixtures';
import { adminSession, uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk, type Identity } from '../support/kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, openBaoTokenEnv } from '../support/operator';
import { synthesizeManifests } from '../support/synth';

jest.setTimeout(300_000);

const NS = 'kac-twin';
const CP_NS = 'kac-twin-cp';
const USER = uniqueName('twin');
const PROJECT = uniqueName('twin');
const PREFIX = childPrefix({ namespace: NS, name: 'app' });
const ROTATION = { interval: '1h', gracePeriod: '10s' };

interface Installation {
  readonly name: 'a' | 'b';
  readonly as: Identity;
  readonly fx: ReturnType<typeof credentialFixtures>;
  readonly identity: { readonly namespace: string; readonly binding: string };
  operator?: OperatorProcess;
  probe?: Probe;
}

const installations: Installation[] = (['a', 'b'] as const).map((name) => ({
  name,
  as: name === 'a' ? 'admin' : 'target',
  fx: credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: USER, projectName: PROJECT, as: name === 'a' ? 'admin' : 'target' }),
  identity: { namespace: `kac-twin-operator-${name}`, binding: `kac-twin-operator-${name}` },
}));
const [A, B] = installations;
let unlock: (() => void) | undefined;

const bao = (uid: string) =>
  new OpenBaoBackup({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, path: `keystone/${CP_NS}/${PREFIX}/${uid}/service-accounts/application-credential` });

async function uidOf(who: Installation, resource: string, name: string): Promise<string> {
  return (await kubectlOk(['get', resource, name, '-n', NS, '-o', 'jsonpath={.metadata.uid}'], { as: who.as })).trim();
}

/** Waits until `who`'s order `app` is Ready at `generation` and its Secret carries it; returns the order. */
async function readyAt(who: Installation, generation: number) {
  return eventually(async () => {
    const o = await who.fx.order('app');
    const doc = await who.fx.delivered('app');
    return o.status?.credentialGeneration === generation && condition(o, 'Ready')?.status === 'True' && doc?.application_credential_id === o.status.credentialID && o;
  }, 120_000);
}

/** Raises `who`'s order to `generation`, waits for it and for the end of its grace period (so the next raise may start). */
async function rotate(who: Installation, generation: number): Promise<void> {
  await who.fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: generation } });
  await readyAt(who, generation);
  await eventually(async () => (await who.fx.order('app')).status?.previousCredentialID === undefined && true, 60_000);
}

/** Makes `who`'s KeystoneUser set a password of its own in Keystone (the other installation's logins then fail). */
async function takePassword(who: Installation, generation: number): Promise<void> {
  await who.fx.merge('keystoneuser', 'svc', { spec: { passwordGeneration: generation } });
  await eventually(async () => {
    const u = await who.fx.order('svc', 'keystoneusers');
    return u.status?.passwordGeneration === generation && condition(u, 'UserReady')?.status === 'True' && true;
  }, 60_000);
}

/** The credentials Keystone holds under the orders' names: id → the owner mark in the description. */
async function held(): Promise<Map<string, string>> {
  const admin = adminSession();
  const user = await new Users(admin).findByName(USER);
  if (!user) return new Map();
  const list = await admin.request({ method: 'GET', path: admin.transport.pathOf(`users/${user.id}/application_credentials`) });
  const all = (list.body as { application_credentials: { id: string; name: string; description?: string }[] }).application_credentials;
  return new Map(all.filter((c) => c.name.startsWith(`${PREFIX}-credential-v`)).map((c) => [c.id, /owner=([^;\s]+)/.exec(c.description ?? '')?.[1] ?? '']));
}

beforeAll(async () => {
  unlock = await lockCluster('two-installations.test.ts');
  const manifests = synthesizeManifests();
  const workDir = process.env.KAC_TEST_WORKDIR as string;
  for (const who of installations) {
    await installCrds(manifests, who.as);
    const kubeconfig = await operatorKubeconfig(manifests, who.identity, `${workDir}/twin-${who.name}.kubeconfig`, { as: who.as });
    for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns], { as: who.as });
    await applyOk([who.fx.adminSecret(), who.fx.controlPlane({ assigned: true })], { as: who.as });
    who.operator = await startOperator({
      name: `twin-${who.name}`,
      kubeconfig,
      namespace: who.identity.namespace,
      logDir: workDir,
      env: openBaoTokenEnv(),
    });
    await waitReady(who.operator);
  }
}, LOCKED_SETUP_MS);

afterAll(async () => {
  for (const who of installations) await who.probe?.stop();
  for (const who of installations) await who.operator?.server.stop(5_000);
  await releaseLeftovers([NS, CP_NS]);
  for (const who of installations) {
    for (const ns of [NS, CP_NS, who.identity.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false'], { as: who.as });
    await removeOperatorRbac(who.identity, who.as);
  }
  // What is left in Keystone of the shared user and project (a failed run).
  const admin = adminSession();
  const user = await new Users(admin).findByName(USER);
  if (user) await new Users(admin).delete(user.id).catch(() => undefined);
  unlock?.();
});

describe('two clusters ordering the same names for one Keystone user, one OpenBao', () => {
  let idA1 = '';

  it('cluster A: generation 1 is delivered', async () => {
    await applyOk([...A.fx.identityOrders(), A.fx.credentialOrder('app', ROTATION)], { as: A.as });
    const o = await readyAt(A, 1);
    idA1 = o.status?.credentialID as string;
    expect(condition(o, 'CredentialReady')?.reason).toBe('CredentialMinted');
    A.probe = A.fx.probe('app');
  });

  it('cluster B takes the user and project over by the markers; its order reports A\'s credential and mints its own beside it', async () => {
    await applyOk(B.fx.identityOrders(), { as: B.as });
    const user = await eventually(async () => {
      const u = await B.fx.order('svc', 'keystoneusers');
      return condition(u, 'UserReady')?.reason === 'UserCollision' && u;
    }, 60_000);
    expect(condition(user, 'UserReady')?.status).toBe('False');
    // The platform admin hands the user and the project to cluster B's orders: their markers, added by hand.
    const admin = adminSession();
    const keystoneUser = await new Users(admin).findByName(USER);
    if (!keystoneUser) throw new Error(`no user ${USER}`);
    await admin.request({ method: 'PATCH', path: admin.transport.pathOf(`users/${keystoneUser.id}`), body: { user: { description: `${keystoneUser.description ?? ''} (${ownerMarker(await uidOf(B, 'keystoneuser', 'svc'))})` } } });
    const projects = await admin.request({ method: 'GET', path: admin.transport.pathOf(`projects?name=${encodeURIComponent(PROJECT)}`) });
    const projectId = (projects.body as { projects: { id: string }[] }).projects[0]?.id as string;
    await admin.request({ method: 'PUT', path: admin.transport.pathOf(`projects/${projectId}/tags/${ownerMarker(await uidOf(B, 'keystoneproject', 'proj'))}`) });
    await applyOk(B.fx.credentialOrder('app', ROTATION), { as: B.as });
    const o = await readyAt(B, 1);
    expect(o.status?.credentialID).not.toBe(idA1);
    const credentialReady = condition(o, 'CredentialReady');
    expect(credentialReady).toMatchObject({ status: 'True', reason: 'ForeignCredential' });
    expect(credentialReady?.message).toContain(idA1);
    const events = JSON.parse(await kubectlOk(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'], { as: B.as })) as { items: { type: string; reason: string; note: string }[] };
    expect(events.items.some((e) => e.type === 'Warning' && e.reason === 'ForeignCredential' && e.note.includes(idA1))).toBe(true);
    B.probe = B.fx.probe('app');
    // Each installation's credentials carry its order's uid.
    const owners = await held();
    expect(owners.get(idA1)).toBe(await uidOf(A, 'keystoneapplicationcredential', 'app'));
    expect(owners.get(o.status?.credentialID as string)).toBe(await uidOf(B, 'keystoneapplicationcredential', 'app'));
  });

  it('B rotates twice; A\'s credential keeps working and stays in Keystone; each backup holds its own cluster\'s credential', async () => {
    await rotate(B, 2);
    await rotate(B, 3);
    expect((await held()).has(idA1)).toBe(true);
    expect(A.probe?.failures).toEqual([]);
    expect(B.probe?.failures).toEqual([]);
    expect(await bao(await uidOf(A, 'keystoneapplicationcredential', 'app')).read()).toBe(idA1);
    expect(await bao(await uidOf(B, 'keystoneapplicationcredential', 'app')).read()).toBe((await B.fx.order('app')).status?.credentialID);
  });

  it("A takes its password back; a tenant of A writes B's credential id into A's delivered Secret: A repairs it and says so, records nothing of it", async () => {
    await takePassword(A, 2);
    const idB = (await B.fx.order('app')).status?.credentialID as string;
    const mine = (await A.fx.order('app')).status?.credentialID as string;
    // The tenant: the limited user, allowed to read and edit the Secrets of the order's namespace in cluster A.
    const tenant = process.env.KAC_KUBE_LIMITED_USER as string;
    await applyOk(
      [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'tenant-secrets', namespace: NS }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'patch', 'update'] }] },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'tenant-secrets', namespace: NS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant-secrets' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: tenant }],
        },
      ],
      { as: A.as },
    );
    // A's own consumers read what the tenant wrote: the tenant breaks them, not B's. A's probe starts again after the repair.
    await A.probe?.stop();
    await kubectlOk(['patch', 'secret', 'app-credentials', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ stringData: { application_credential_id: idB } })], { as: 'limited' });
    await eventually(async () => (await A.fx.delivered('app'))?.application_credential_id === mine && true, 60_000);
    const warning = await eventually(async () => {
      const events = JSON.parse(await kubectlOk(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'], { as: A.as })) as { items: { type: string; reason: string; note: string }[] };
      return events.items.find((e) => e.type === 'Warning' && e.reason === 'SecretRepaired');
    }, 60_000);
    expect(warning.note).toContain(`the delivered Secret ${NS}/app-credentials named application credential ${idB}, which is not this order's`);
    const o = await A.fx.order('app');
    expect([o.status?.credentialID, o.status?.previousCredentialID]).not.toContain(idB);
    expect((await held()).has(idB)).toBe(true);
    expect(B.probe?.failures).toEqual([]);
    A.probe = A.fx.probe('app');
  });

  it('A rotates twice and sweeps; B\'s credential keeps working', async () => {
    const idB3 = (await B.fx.order('app')).status?.credentialID as string;
    await rotate(A, 2);
    await rotate(A, 3);
    expect((await held()).has(idB3)).toBe(true);
    expect(A.probe?.failures).toEqual([]);
    expect(B.probe?.failures).toEqual([]);
    expect(await bao(await uidOf(A, 'keystoneapplicationcredential', 'app')).read()).toBe((await A.fx.order('app')).status?.credentialID);
  });

  it('A is torn down: only its own credentials and backup go; B\'s credential keeps working', async () => {
    const uidA = await uidOf(A, 'keystoneapplicationcredential', 'app');
    await A.probe?.stop();
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'app', '-n', NS, '--wait=true', '--timeout=90s'], { as: A.as });
    const owners = await held();
    expect([...owners.values()].filter((owner) => owner === uidA)).toEqual([]);
    expect(owners.has((await B.fx.order('app')).status?.credentialID as string)).toBe(true);
    expect(await bao(uidA).read()).toBeUndefined();
    expect(await bao(await uidOf(B, 'keystoneapplicationcredential', 'app')).read()).toBe((await B.fx.order('app')).status?.credentialID);
    // B's probe a few more seconds after the teardown.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(B.probe?.failures).toEqual([]);
  });

  it('B takes its password back and is torn down: nothing is left under the orders\' names', async () => {
    await takePassword(B, 2);
    await B.probe?.stop();
    expect(B.probe?.failures).toEqual([]);
    const uidB = await uidOf(B, 'keystoneapplicationcredential', 'app');
    await kubectlOk(['delete', 'keystoneapplicationcredential', 'app', '-n', NS, '--wait=true', '--timeout=90s'], { as: B.as });
    expect([...(await held()).keys()]).toEqual([]);
    expect(await bao(uidB).read()).toBeUndefined();
  });
});
