/**
 * What tenants and the platform team do to orders: create one (or change its schedule), raise its generation (rotate
 * now), delete it, take the namespace's consent away and give it back (frozen orders), and order a KeystoneUser,
 * KeystoneProject or KeystoneRoleAssignment named like an order (another controller on the same namespace/name).
 */
import fc from 'fast-check';
import type { EventKind, Setup } from '../model';
import { controlPlane, CP, IDENTITY, PATHS, TENANTS, type FleetDefaults, type OrderSpec, type Tenant } from '../objects';
import type { OrderRef } from '../sim-world';
import { FLEET_INTERVAL, jitterArb, windowNameArb, WINDOWS, type WindowName } from './policy';

/** The names orders take (a small pool, so that events meet the same orders). */
export const ORDER_NAMES = ['app-1', 'app-2', 'app-3', 'app-4'] as const;

export const tenantArb: fc.Arbitrary<Tenant> = fc.constantFrom(...TENANTS);
export const orderRefArb: fc.Arbitrary<OrderRef> = fc.record({ tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES) });

/** A rotation schedule: intervals of 10 minutes to an hour (or off), grace periods of 2 to 5 minutes. */
export const rotationArb = fc.record({ interval: fc.constantFrom('10m', '20m', '1h', '0s'), gracePeriod: fc.constantFrom('2m', '3m', '5m') });

/**
 * An order's own rotation settings: `interval` `fleet` leaves the interval to the fleet defaults (and the CRD's default),
 * `window` names one of {@link WINDOWS}, `jitterPercent` 0, 10 or 50 (issue 48; absent: the order names none).
 */
type CreateOrder = { kind: 'create-order'; tenant: Tenant; name: string; interval: string; gracePeriod: string; window?: WindowName; jitterPercent?: number };
type Raise = { kind: 'raise'; tenant: Tenant; name: string };
type DeleteOrder = { kind: 'delete-order'; tenant: Tenant; name: string };
type Consent = { kind: 'consent'; tenant: Tenant; assigned: boolean };
type LikeOrder = { kind: 'identity-like-order'; tenant: Tenant; name: string; as: 'KeystoneUser' | 'KeystoneProject' | 'KeystoneRoleAssignment'; broken: boolean };

export const createOrder: EventKind<CreateOrder> = {
  kind: 'create-order',
  description: 'a tenant creates an order, or changes the rotation of one (its interval left to the fleet, a rotation window, jitter)',
  weight: 3,
  generate: () =>
    fc.record(
      {
        kind: fc.constant('create-order' as const),
        tenant: tenantArb,
        name: fc.constantFrom(...ORDER_NAMES),
        interval: fc.oneof({ arbitrary: rotationArb.map((r) => r.interval), weight: 4 }, { arbitrary: fc.constant(FLEET_INTERVAL), weight: 1 }),
        gracePeriod: rotationArb.map((r) => r.gracePeriod),
        window: windowNameArb,
        jitterPercent: jitterArb,
      },
      { requiredKeys: ['kind', 'tenant', 'name', 'interval', 'gracePeriod'] },
    ),
  apply: (world, e) => {
    const generation = (world.order(e)?.spec as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 1;
    world.putOrder(e, {
      ...(e.interval === FLEET_INTERVAL ? {} : { interval: e.interval }),
      gracePeriod: e.gracePeriod,
      credentialGeneration: generation,
      ...(e.window !== undefined ? { window: WINDOWS[e.window] } : {}),
      ...(e.jitterPercent !== undefined ? { jitterPercent: e.jitterPercent } : {}),
    });
  },
};

export const raise: EventKind<Raise> = {
  kind: 'raise',
  description: "a tenant raises an order's credentialGeneration (rotate now)",
  weight: 3,
  generate: () => orderRefArb.map((ref) => ({ kind: 'raise' as const, ...ref })),
  apply: (world, e) => {
    const object = world.order(e);
    if (!object || object.metadata.deletionTimestamp) return;
    const spec = object.spec as { credentialGeneration?: number; rotation: Omit<OrderSpec, 'credentialGeneration'> };
    world.putOrder(e, { ...spec.rotation, credentialGeneration: (spec.credentialGeneration ?? 1) + 1 });
  },
};

export const deleteOrder: EventKind<DeleteOrder> = {
  kind: 'delete-order',
  description: 'a tenant deletes an order (its teardown runs behind its finalizer)',
  weight: 1,
  generate: () => orderRefArb.map((ref) => ({ kind: 'delete-order' as const, ...ref })),
  apply: (world, e) => world.serverOf(e.tenant).remove(PATHS.orders, e.tenant, e.name, { graceful: true }),
};

export const consent: EventKind<Consent> = {
  kind: 'consent',
  description: "the platform team takes a namespace's assignment off the ControlPlane (its orders freeze), or puts it back",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('consent' as const), tenant: tenantArb, assigned: fc.boolean() }),
  apply: (world, e) => {
    const cp = world.management.object(PATHS.controlPlanes, CP.namespace, CP.name);
    const spec = cp?.spec as { namespaceAssignments?: { namespace: string; targetClusterRef?: unknown; applicationCredentialDefaults?: FleetDefaults }[]; applicationCredentialDefaults?: FleetDefaults } | undefined;
    // The fleet defaults stay as they are (an assignment given back has none: it was written anew).
    const assignments = (spec?.namespaceAssignments ?? []).map((a) => ({ namespace: a.namespace, target: a.targetClusterRef !== undefined, defaults: a.applicationCredentialDefaults }));
    const others = assignments.filter((a) => a.namespace !== e.tenant);
    const mine = assignments.find((a) => a.namespace === e.tenant) ?? { namespace: e.tenant, target: e.tenant === 'tenant-b' && world.setup.targetCluster };
    const next = e.assigned ? [...others, mine].sort((a, b) => a.namespace.localeCompare(b.namespace)) : others;
    world.management.seed(PATHS.controlPlanes, { ...cp, spec: controlPlane(next, spec?.applicationCredentialDefaults).spec }, 'kubectl');
  },
};

export const identityLikeOrder: EventKind<LikeOrder> = {
  kind: 'identity-like-order',
  description: 'a tenant orders a KeystoneUser, KeystoneProject or KeystoneRoleAssignment named like an order (broken: its user does not exist)',
  weight: 1,
  generate: () =>
    fc.record({
      kind: fc.constant('identity-like-order' as const),
      tenant: tenantArb,
      name: fc.constantFrom(...ORDER_NAMES),
      as: fc.constantFrom('KeystoneUser' as const, 'KeystoneProject' as const, 'KeystoneRoleAssignment' as const),
      broken: fc.boolean(),
    }),
  apply: (world, e) => {
    const ref = { controlPlaneRef: { ...CP } };
    const metadata = { name: e.name, namespace: e.tenant };
    const server = world.serverOf(e.tenant);
    if (e.as === 'KeystoneUser') server.seed(PATHS.users, { apiVersion: 'c5c3.io/v1alpha1', kind: e.as, metadata, spec: { ...ref, userName: `${e.tenant}-${e.name}` } });
    else if (e.as === 'KeystoneProject') server.seed(PATHS.projects, { apiVersion: 'c5c3.io/v1alpha1', kind: e.as, metadata, spec: { ...ref, projectName: `${e.tenant}-${e.name}` } });
    else server.seed(PATHS.assignments, { apiVersion: 'c5c3.io/v1alpha1', kind: e.as, metadata, spec: { ...ref, userRef: { name: e.broken ? 'nobody' : IDENTITY.user }, projectRef: { name: IDENTITY.project }, role: 'reader' } });
  },
};

/** The orders a setup starts with: one to four, in either tenant, with their schedules. */
export function ordersArb(): fc.Arbitrary<Setup['orders']> {
  return fc.uniqueArray(fc.record({ tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), interval: rotationArb.map((r) => r.interval), gracePeriod: rotationArb.map((r) => r.gracePeriod) }), {
    minLength: 1,
    maxLength: 4,
    selector: (o) => `${o.tenant}/${o.name}`,
  });
}
