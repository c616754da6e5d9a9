/**
 * What tenants do with the delivery options of issue 49 (src/api/deletion-policy.ts, secret-template.ts, adoption.ts,
 * the revoke-previous annotation): set or drop an order's `deletionPolicy`, give it a `secretTemplate` (labels,
 * annotations, `cloud.conf`, the `OS_*` keys, a free key) or take it away, ask to revoke the previous credential now
 * (a new value of the `c5c3.io/revoke-previous` annotation, or the same one applied again, as GitOps does), and create
 * an order that adopts an existing credential: a hand-made one of its user with its secret given (valid), or one it
 * cannot prove its own (the wrong secret, another tenant's user's, another order's).
 */
import fc from 'fast-check';
import { DeletionPolicy, REVOKE_PREVIOUS_ANNOTATION, SecretFormat, type DeletionPolicy as Policy, type SecretTemplate } from '../../../src/api';
import type { EventKind } from '../model';
import { base64, IDENTITY, PATHS, type Tenant } from '../objects';
import type { OrderRef, SimWorld } from '../sim-world';
import { ORDER_NAMES, rotationArb, tenantArb } from './orders';

type SetDeletionPolicy = { kind: 'deletion-policy'; tenant: Tenant; name: string; policy: Policy | 'none' };
type SetTemplate = { kind: 'secret-template'; tenant: Tenant; name: string; template: keyof typeof TEMPLATES | 'none' };
type RevokePrevious = { kind: 'revoke-previous'; tenant: Tenant; name: string; again: boolean };
type AdoptOrder = { kind: 'adopt-order'; tenant: Tenant; name: string; proof: 'hand-made' | 'wrong-secret' | 'other-user' | 'another-order'; interval: string; gracePeriod: string };

/** The templates a tenant gives an order: each format alone, and everything at once with a free key. */
export const TEMPLATES: Readonly<Record<'cloud-conf' | 'env' | 'all', SecretTemplate>> = {
  'cloud-conf': { formats: [SecretFormat.CloudConf] },
  env: { labels: { 'velero.io/backup': 'credentials' }, formats: [SecretFormat.Env] },
  all: {
    labels: { team: 'payments' },
    annotations: { 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true' },
    formats: [SecretFormat.CloudConf, SecretFormat.Env],
    data: { openrc: 'export OS_AUTH_URL={{ authURL }}\nexport OS_APPLICATION_CREDENTIAL_ID={{ applicationCredentialID }}\nexport OS_APPLICATION_CREDENTIAL_SECRET={{applicationCredentialSecret}}\n' },
  },
};

/** The order as it is, unless it is absent or being deleted (a tenant's change to it then is none the sim makes). */
function live(world: SimWorld, ref: OrderRef) {
  const object = world.order(ref);
  return object && !object.metadata.deletionTimestamp ? object : undefined;
}

/** Changes one delivery option of an order, its rotation and generation as they are. */
function setOption(world: SimWorld, ref: OrderRef, options: Parameters<SimWorld['putOrder']>[2]): void {
  const object = live(world, ref);
  if (!object) return;
  const spec = object.spec as { credentialGeneration?: number; rotation: { interval: string; gracePeriod: string } };
  world.putOrder(ref, { ...spec.rotation, credentialGeneration: spec.credentialGeneration ?? 1 }, options);
}

export const deletionPolicy: EventKind<SetDeletionPolicy> = {
  kind: 'deletion-policy',
  description: "a tenant sets an order's deletionPolicy to Retain or Delete, or drops it (Delete, the default)",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('deletion-policy' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), policy: fc.constantFrom<Policy | 'none'>(DeletionPolicy.Retain, DeletionPolicy.Delete, 'none') }),
  apply: (world, e) => setOption(world, e, { deletionPolicy: e.policy === 'none' ? null : e.policy }),
};

export const secretTemplate: EventKind<SetTemplate> = {
  kind: 'secret-template',
  description: 'a tenant gives an order a secretTemplate (cloud.conf, the OS_* keys, labels, annotations, a free key) or takes it away',
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('secret-template' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), template: fc.constantFrom<SetTemplate['template']>('cloud-conf', 'env', 'all', 'none') }),
  apply: (world, e) => setOption(world, e, { secretTemplate: e.template === 'none' ? null : TEMPLATES[e.template] }),
};

export const revokePrevious: EventKind<RevokePrevious> = {
  kind: 'revoke-previous',
  description: 'a tenant asks to revoke the previous credential now (a new value of the c5c3.io/revoke-previous annotation), or applies the one it has again',
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('revoke-previous' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), again: fc.boolean() }),
  apply: (world, e) => {
    const object = live(world, e);
    if (!object) return;
    const annotations = (object.metadata.annotations ?? {}) as Record<string, string>;
    // `keystone-appcred rotate --revoke-previous` writes the time to the millisecond (src/cli/rotate.ts).
    const value = e.again ? annotations[REVOKE_PREVIOUS_ANNOTATION] : new Date(world.time.now()).toISOString();
    if (value === undefined) return;
    world.serverOf(e.tenant).seed(PATHS.orders, { ...object, metadata: { ...object.metadata, annotations: { ...annotations, [REVOKE_PREVIOUS_ANNOTATION]: value } } }, 'kubectl-annotate');
  },
};

export const adoptOrder: EventKind<AdoptOrder> = {
  kind: 'adopt-order',
  description: 'a tenant creates an order that adopts an existing credential: a hand-made one of its user with its secret given, or one it cannot prove its own (a wrong secret, another user, another order)',
  weight: 1,
  generate: () =>
    fc.record({
      kind: fc.constant('adopt-order' as const),
      tenant: tenantArb,
      name: fc.constantFrom(...ORDER_NAMES),
      proof: fc.constantFrom('hand-made' as const, 'wrong-secret' as const, 'other-user' as const, 'another-order' as const),
      interval: rotationArb.map((r) => r.interval),
      gracePeriod: rotationArb.map((r) => r.gracePeriod),
    }),
  apply: (world, e) => {
    if (world.order(e)) return; // adoption is a new order's: one that holds a credential mints
    const given = handOver(world, e);
    if (!given) return;
    world.adoptions.set(`${e.tenant}/${e.name}`, { id: given.id, valid: e.proof === 'hand-made', at: world.time.now() });
    world.putOrder(e, { interval: e.interval, gracePeriod: e.gracePeriod, credentialGeneration: 1 }, { adopt: { credentialID: given.id, secretRef: { name: given.secretName } } });
  },
};

/** The credential an adoption names and the Secret that gives its secret, made as the proof says (none: nothing to name). */
function handOver(world: SimWorld, e: AdoptOrder): { id: string; secretName: string } | undefined {
  if (e.proof === 'another-order') {
    const other = world.orders().find((o) => o.tenant === e.tenant && o.name !== e.name && world.delivered(o)?.application_credential_id);
    const id = other && world.delivered(other)?.application_credential_id;
    return other && id ? { id, secretName: `${other.name}-credentials` } : undefined;
  }
  const owner = e.proof === 'other-user' ? (e.tenant === 'tenant-a' ? 'tenant-b' : 'tenant-a') : e.tenant;
  const userId = world.keystone.userNamed(`${owner}-${IDENTITY.user}`);
  const projectId = world.keystone.projectNamed(`${owner}-${IDENTITY.project}`);
  if (!userId || !projectId) return undefined;
  const made = `${world.seed}-${e.tenant}-${e.name}-${world.time.now()}`;
  const stored = world.keystone.addCredential({ name: `hand-made-${made}`, userId, projectId, secret: `hand-made-secret-${made}-e41b`, description: 'made by hand' });
  // A credential the order cannot prove its own is nobody's the operator may touch.
  if (e.proof !== 'hand-made') world.foreign.add(stored.id);
  const secret = e.proof === 'wrong-secret' ? `not-the-secret-${made}-90d3` : stored.secret;
  const secretName = `${e.name}-handmade`;
  world.serverOf(e.tenant).seed(PATHS.secrets, { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: secretName, namespace: e.tenant }, data: { application_credential_secret: base64(secret) } }, 'kubectl');
  return { id: stored.id, secretName };
}
