/**
 * What the operator's dependencies do: Keystone, OpenBao, the management cluster's API server or the target cluster's
 * refuse connections, answer 5xx, 401 or 403, or answer too late, for ten seconds to two hours (then they answer
 * again); and the watches end, expire (410 Gone: the informers relist, the changes in between unobserved) or resume
 * further back than asked (their informers see again what they saw).
 */
import fc from 'fast-check';
import type { EventKind } from '../model';
import type { Dependency, Fault } from '../network';
import { PATHS, type Tenant } from '../objects';
import { ORDER_NAMES, tenantArb } from './orders';

type Outage = { kind: 'outage'; dependency: Dependency; fault: 'down' | '500' | '503' | '401' | '403' | 'slow'; seconds: number };
type WatchFault = { kind: 'watch'; how: 'close' | 'expire' | 'replay'; changes: number };
type Conflict = { kind: 'conflict'; tenant: Tenant; name: string };
type SecretAccess = { kind: 'secret-access'; tenant: Tenant; granted: boolean };

/** An outage's length: mostly short blips, sometimes most of an hour or two. */
export const outageSecondsArb = fc.oneof({ arbitrary: fc.integer({ min: 10, max: 120 }), weight: 3 }, { arbitrary: fc.integer({ min: 120, max: 1800 }), weight: 2 }, { arbitrary: fc.integer({ min: 1800, max: 7200 }), weight: 1 });

export function faultOf(fault: Outage['fault']): Fault {
  if (fault === 'down') return { mode: 'down' };
  if (fault === 'slow') return { mode: 'slow', delayMs: 45_000 };
  return { mode: 'status', status: Number(fault) };
}

export const outage: EventKind<Outage> = {
  kind: 'outage',
  description: 'a dependency (Keystone, OpenBao, an API server) refuses connections, answers 5xx, 401 or 403, or answers too late, for a while',
  weight: 4,
  generate: (setup) =>
    fc.record({
      kind: fc.constant('outage' as const),
      dependency: fc.constantFrom<Dependency>('keystone', 'openbao', 'api', ...(setup.targetCluster ? (['target'] as const) : [])),
      fault: fc.constantFrom('down' as const, '500' as const, '503' as const, '401' as const, '403' as const, 'slow' as const),
      seconds: outageSecondsArb,
    }),
  apply: (world, e) => world.fault(e.dependency, faultOf(e.fault), e.seconds * 1000),
};

export const watchFault: EventKind<WatchFault> = {
  kind: 'watch',
  description: 'the watches end (close), expire with their history compacted (410 Gone: a relist, what changed meanwhile unobserved), or resume further back than asked (replay)',
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('watch' as const), how: fc.constantFrom('close' as const, 'expire' as const, 'replay' as const), changes: fc.integer({ min: 1, max: 20 }) }),
  apply: (world, e) => {
    for (const server of [world.management, world.target]) {
      if (e.how === 'expire') server.compact();
      if (e.how === 'replay') server.replay(e.changes);
      server.closeWatches();
    }
  },
};

export const conflict: EventKind<Conflict> = {
  kind: 'conflict',
  description: "the next status write of an order loses to another writer's (409 Conflict: a write of the order's own that failed)",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('conflict' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES) }),
  apply: (world, e) => {
    const path = `/namespaces/${e.tenant}/${PATHS.orders.split('/').pop() ?? ''}/${e.name}/status`;
    world.serverOf(e.tenant).failNext((r) => r.method === 'PATCH' && r.path.endsWith(path), 409, 'Conflict');
  },
};

export const secretAccess: EventKind<SecretAccess> = {
  kind: 'secret-access',
  description: "the operator's Role on a tenant's Secrets is taken away, or given back (the namespaced Secret access: SecretAccessNotGranted)",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('secret-access' as const), tenant: tenantArb, granted: fc.boolean() }),
  apply: (world, e) => world.grantSecrets(e.tenant, e.granted),
};
