/**
 * The real installation the chaos run disturbs: two operator replicas (./../replicas.ts) under the construct's RBAC on
 * the file's API server, reaching Keystone and OpenBao only through recording proxies that can cut them off or answer
 * a status instead (../recording-proxy.ts); a ControlPlane assigning two tenants' namespaces, each with its project,
 * user and role assignment; the orders of ./schedule.ts; and a credential of tenant a's user that the operator did not
 * make. {@link Installation.apply} makes a schedule's event happen and records it as a {@link Disturbance}.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ApplicationCredentials, KeystoneSession, Projects, Users } from '../../../src/keystone';
import { keystoneDependency } from '../../../src/operator/credential/reached';
import { restartApiserver } from '../apiserver-restart';
import { credentialFixtures, type CredentialFixtures } from '../credential-fixtures';
import { adminSession, uniqueName } from '../keystone-fixtures';
import { apply as kubectlApply, applyOk, eventually, kubectl, kubectlOk } from '../kubectl';
import { installCrds, operatorKubeconfig, releaseLeftovers, removeOperatorRbac } from '../operator';
import { startRecordingProxy, type RecordingProxy } from '../recording-proxy';
import { startReplicas, type Replicas } from '../replicas';
import { synthesizeManifests } from '../synth';
import { graceSecondsOf, ORDERS, type ChaosEvent, type ChaosSetup, type Tenant } from './schedule';
import type { Disturbance, OrderInfo } from './timeline';

const CP_NS = 'kac-chaos-cp';
const IDENTITY = { namespace: 'kac-chaos-operator', binding: 'kac-chaos-operator' };
export const REPLICAS = ['chaos-1', 'chaos-2'] as const;
const namespaceOf = (tenant: Tenant) => `kac-chaos-${tenant}`;

export interface Installation {
  readonly keystone: RecordingProxy;
  readonly openbao: RecordingProxy;
  readonly replicas: Replicas;
  readonly fixtures: Readonly<Record<Tenant, CredentialFixtures>>;
  readonly orders: readonly OrderInfo[];
  readonly disturbances: Disturbance[];
  /** What went wrong applying an event (it did not happen as drawn). */
  readonly failures: string[];
  /** Credentials of the users the operator did not make (their ids), and their secrets (for the scan). */
  readonly foreign: { readonly ids: string[]; readonly secrets: string[] };
  readonly keystoneDependency: string;
  readonly logDir: string;
  /** Makes a credential of tenant a's user as somebody else would (once the user's password is delivered). */
  addForeignCredential(): Promise<void>;
  /** Makes the event happen; resolves when it is over (an outage healed, consent back, the API server ready). */
  apply(event: ChaosEvent): Promise<void>;
  /** Deletes the orders with the operator running (their teardown), stops it, removes what is left. */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function installChaos(setup: ChaosSetup, logDir: string): Promise<Installation> {
  const grace = graceSecondsOf(setup);
  const fixtures: Record<Tenant, CredentialFixtures> = {
    a: credentialFixtures({ namespace: namespaceOf('a'), cpNamespace: CP_NS, userName: uniqueName('chaos-a'), projectName: uniqueName('chaos-a') }),
    b: credentialFixtures({ namespace: namespaceOf('b'), cpNamespace: CP_NS, userName: uniqueName('chaos-b'), projectName: uniqueName('chaos-b') }),
  };
  const keystone = await startRecordingProxy(fixtures.a.env.authUrl);
  const openbao = await startRecordingProxy(process.env.KAC_BAO_ADDR as string);
  const manifests = await installCrds(synthesizeManifests());
  const kubeconfig = await operatorKubeconfig(manifests, IDENTITY, join(logDir, 'chaos.kubeconfig'));
  for (const ns of [CP_NS, namespaceOf('a'), namespaceOf('b')]) await kubectl(['create', 'namespace', ns]);
  /** The ControlPlane with the tenants in `assigned` (tenant a's fixtures write it; b rides as an extra assignment). */
  const controlPlane = (assigned: readonly Tenant[]) =>
    fixtures.a.controlPlane({ authUrl: keystone.url, assigned: assigned.includes('a'), assignments: assigned.includes('b') ? [{ namespace: namespaceOf('b') }] : [] });
  await applyOk([fixtures.a.adminSecret(), controlPlane(['a', 'b'])], { fieldManager: 'kac-test' });
  await applyOk([...fixtures.a.identityOrders(), ...fixtures.b.identityOrders()], { fieldManager: 'kac-test' });
  const replicas = await startReplicas(REPLICAS, {
    kubeconfig,
    namespace: IDENTITY.namespace,
    logDir,
    env: { KAC_OPENBAO_ADDRESS: openbao.url, KAC_OPENBAO_AUTH_METHOD: 'token', KAC_OPENBAO_TOKEN: process.env.KAC_BAO_TOKEN as string },
  });
  for (const order of ORDERS) {
    const rotation = { interval: order.rotating ? `${setup.intervalSeconds}s` : '0s', gracePeriod: `${grace}s` };
    await applyOk(fixtures[order.tenant].credentialOrder(order.name, rotation), { fieldManager: 'kac-test' });
  }

  const admin = adminSession();
  const users = new Users(admin);
  const userOf = async (tenant: Tenant) => {
    for (;;) {
      // The KeystoneUser order creates it: wait for it.
      const user = await users.findByName((await fixtures[tenant].order('svc', 'keystoneusers')).spec.userName as string);
      if (user) return { id: user.id, name: user.name };
      await sleep(500);
    }
  };
  const tenantUsers = { a: await userOf('a'), b: await userOf('b') };
  const orders: OrderInfo[] = ORDERS.map((o) => ({
    key: `${namespaceOf(o.tenant)}/${o.name}`,
    tenant: o.tenant,
    prefix: fixtures[o.tenant].prefixOf(o.name),
    user: tenantUsers[o.tenant],
    graceMs: grace * 1000,
    intervalMs: o.rotating ? setup.intervalSeconds * 1000 : 0,
  }));

  const disturbances: Disturbance[] = [];
  const failures: string[] = [];
  const foreign = { ids: [] as string[], secrets: [] as string[] };
  const consent = new Set<Tenant>(['a', 'b']);
  const outages = new Map<RecordingProxy, object>();

  /** A credential of tenant a's user made by somebody else (its own name, a secret of its own, no expiry). */
  async function addForeignCredential(): Promise<void> {
    const delivered = await fixtures.a.delivered('svc');
    const project = await new Projects(admin).findByName((await fixtures.a.order('proj', 'keystoneprojects')).spec.projectName as string);
    if (!delivered?.password || !project) throw new Error('tenant a has no delivered user password or project yet');
    const session = new KeystoneSession({ authUrl: fixtures.a.env.authUrl, auth: { method: 'password', user: { id: tenantUsers.a.id }, password: delivered.password, project: { id: project.id } } });
    const secret = randomBytes(24).toString('base64url');
    const made = await new ApplicationCredentials(session).create({ name: `chaos-somebody-else-${randomBytes(4).toString('hex')}`, secret });
    foreign.ids.push(made.id);
    foreign.secrets.push(secret, delivered.password);
  }

  const orderNamed = (name: string) => ORDERS.find((o) => o.name === name) as (typeof ORDERS)[number];
  /** Runs what makes a disturbance happen and records it, from its start to its end (also when it failed midway). */
  const during = async (what: Omit<Disturbance, 'from' | 'to'>, run: () => Promise<void>) => {
    const from = Date.now();
    try {
      await run();
    } finally {
      disturbances.push({ ...what, from, to: Date.now() });
    }
  };

  async function tenantEdit(name: string, edit: 'key' | 'swap' | 'swap-keys' | 'delete'): Promise<void> {
    const o = orderNamed(name);
    const fx = fixtures[o.tenant];
    const secret = `${name}-credentials`;
    const ns = namespaceOf(o.tenant);
    if (edit === 'delete') {
      await kubectlOk(['delete', 'secret', secret, '-n', ns]);
      return;
    }
    const data = await fx.delivered(name);
    if (!data) throw new Error(`${ns}/${secret} does not exist`);
    let patch: Record<string, string>;
    if (edit === 'key') patch = { application_credential_secret: `edited-by-the-tenant-${randomBytes(6).toString('hex')}` };
    else if (edit === 'swap-keys') patch = { application_credential_id: data.application_credential_secret, application_credential_secret: data.application_credential_id };
    else {
      const other = ORDERS.find((x) => x.name !== name && x.tenant === o.tenant) ?? ORDERS.find((x) => x.name !== name);
      const id = (await fixtures[other!.tenant].delivered(other!.name))?.application_credential_id;
      patch = { application_credential_id: id ?? '0123456789abcdef0123456789abcdef' };
    }
    await kubectlOk(['patch', 'secret', secret, '-n', ns, '--type=merge', '-p', JSON.stringify({ stringData: patch })]);
  }

  async function apply(event: ChaosEvent): Promise<void> {
    try {
      switch (event.kind) {
        case 'kill':
        case 'handover':
          return await during({ kind: event.kind }, async () => {
            const leader = await replicas.leader();
            if (!leader) throw new Error('no replica leads');
            leader.server.process.kill(event.kind === 'kill' ? 'SIGKILL' : 'SIGTERM');
            await replicas.nextLeader(leader);
          });
        case 'keystone':
        case 'openbao':
          return await during({ kind: event.kind, fault: event.fault }, async () => {
            const proxy = event.kind === 'keystone' ? keystone : openbao;
            // A later outage of the same dependency replaces this one (and heals it when it ends).
            const mine = {};
            outages.set(proxy, mine);
            proxy.down = event.fault === 'down';
            proxy.fault = event.fault === 'down' ? undefined : () => Number(event.fault);
            await sleep(event.seconds * 1000);
            if (outages.get(proxy) !== mine) return;
            proxy.down = false;
            proxy.fault = undefined;
          });
        case 'apiserver-restart':
          return await during({ kind: 'apiserver' }, async () => {
            await restartApiserver();
          });
        case 'tenant-edit':
          return await during({ kind: 'tenant-edit', order: event.order, fault: event.edit }, () => tenantEdit(event.order, event.edit));
        case 'raise':
          return await during({ kind: 'raise', order: event.order }, async () => {
            const o = orderNamed(event.order);
            const spec = (await fixtures[o.tenant].order(o.name)).spec as { credentialGeneration?: number };
            await fixtures[o.tenant].merge('keystoneapplicationcredential', o.name, { spec: { credentialGeneration: (spec.credentialGeneration ?? 1) + 1 } });
          });
        case 'consent':
          return await during({ kind: 'consent', tenant: event.tenant }, async () => {
            consent.delete(event.tenant);
            try {
              await applyOk(controlPlane([...consent]), { fieldManager: 'kac-test' });
              await sleep(event.seconds * 1000);
            } finally {
              consent.add(event.tenant);
              // Also through an API server restart meanwhile: the consent must come back.
              await eventually(async () => (await kubectlApply([controlPlane([...consent])], { fieldManager: 'kac-test' })).code === 0, 180_000, 1_000);
            }
          });
      }
    } catch (error) {
      failures.push(`${JSON.stringify(event)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async function close(): Promise<void> {
    keystone.down = false;
    keystone.fault = undefined;
    openbao.down = false;
    openbao.fault = undefined;
    for (const tenant of ['a', 'b'] as const) await kubectl(['delete', 'keystoneapplicationcredentials', '--all', '-n', namespaceOf(tenant), '--wait=false']);
    for (const tenant of ['a', 'b'] as const) await kubectl(['delete', 'keystoneroleassignments,keystoneusers,keystoneprojects', '--all', '-n', namespaceOf(tenant), '--wait=false']);
    await kubectl(['wait', '--for=delete', 'keystoneapplicationcredentials,keystoneroleassignments,keystoneusers,keystoneprojects', '--all', '-n', namespaceOf('a'), '--timeout=90s']);
    await kubectl(['wait', '--for=delete', 'keystoneapplicationcredentials,keystoneroleassignments,keystoneusers,keystoneprojects', '--all', '-n', namespaceOf('b'), '--timeout=90s']);
    await replicas.stop();
    await releaseLeftovers([namespaceOf('a'), namespaceOf('b'), CP_NS]);
    for (const ns of [namespaceOf('a'), namespaceOf('b'), CP_NS, IDENTITY.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
    await removeOperatorRbac(IDENTITY);
    await keystone.close();
    await openbao.close();
  }

  return {
    keystone,
    openbao,
    replicas,
    fixtures,
    orders,
    disturbances,
    failures,
    foreign,
    keystoneDependency: keystoneDependency(keystone.url),
    logDir,
    addForeignCredential,
    apply,
    close,
  };
}
