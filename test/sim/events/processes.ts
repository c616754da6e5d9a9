/**
 * What happens to the operator's processes: every replica restarted (a crash of all, a rollout: every in-memory state
 * lost), the leader killed (the standby takes over, or the kubelet starts it again), the leader killed at the instant
 * one of its writes landed and before it heard the reply (a mint, a sweep, a backup, a delivery, a parked secret, a
 * status), and an order's status gone stale or missing (a restore from an older backup of the cluster, a lost write).
 */
import fc from 'fast-check';
import type { EventKind } from '../model';
import type { Call } from '../network';
import { PATHS, type Tenant } from '../objects';
import { ORDER_NAMES, tenantArb } from './orders';

type Restart = { kind: 'restart' };
type Failover = { kind: 'failover' };
type CrashAfter = { kind: 'crash-after'; write: keyof typeof WRITES };
type StaleStatus = { kind: 'stale-status'; tenant: Tenant; name: string; back: number };

/** The writes a crash can follow, as the network sees them. */
export const WRITES = {
  mint: (c: Call) => c.dependency === 'keystone' && c.method === 'POST' && c.path.endsWith('/application_credentials'),
  sweep: (c: Call) => c.dependency === 'keystone' && c.method === 'DELETE' && c.path.includes('/application_credentials/'),
  backup: (c: Call) => c.dependency === 'openbao' && c.method === 'POST' && c.path.includes('/data/'),
  deliver: (c: Call) => (c.dependency === 'api' || c.dependency === 'target') && c.method === 'PATCH' && /\/secrets\/[^/]+-credentials$/.test(c.path),
  park: (c: Call) => c.dependency === 'api' && c.method === 'POST' && c.path.endsWith('/secrets'),
  status: (c: Call) => (c.dependency === 'api' || c.dependency === 'target') && c.method === 'PATCH' && c.path.endsWith('/status'),
} as const;

export const restart: EventKind<Restart> = {
  kind: 'restart',
  description: 'every replica is killed and started again: all in-memory state lost',
  weight: 2,
  generate: () => fc.constant({ kind: 'restart' as const }),
  apply: (world) => world.restartAll(),
};

export const failover: EventKind<Failover> = {
  kind: 'failover',
  description: 'the leader is killed: the standby takes over once the Lease expires (or the kubelet starts it again)',
  weight: 1,
  generate: () => fc.constant({ kind: 'failover' as const }),
  apply: (world) => world.failover(),
};

export const crashAfter: EventKind<CrashAfter> = {
  kind: 'crash-after',
  description: 'the process that next makes this write is killed the instant it landed, before the reply reached it',
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('crash-after' as const), write: fc.constantFrom(...(Object.keys(WRITES) as (keyof typeof WRITES)[])) }),
  apply: (world, e) => {
    world.network.tripwire = WRITES[e.write];
  },
};

export const staleStatus: EventKind<StaleStatus> = {
  kind: 'stale-status',
  description: "an order's status goes back to the one it had `back` generations ago (a restore of the cluster from an older backup), or away (back 0)",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('stale-status' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), back: fc.integer({ min: 0, max: 3 }) }),
  apply: (world, e) => {
    const object = world.order(e);
    if (!object) return;
    // The last status it had `back` generations ago (a backup of the cluster that old), or none at all.
    const history = (world.statusHistory.get(`${e.tenant}/${e.name}`) ?? []) as { credentialGeneration?: number }[];
    const current = (object.status as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 0;
    const status = e.back === 0 ? undefined : [...history].reverse().find((s) => (s.credentialGeneration ?? 0) <= current - e.back);
    const rest: Record<string, unknown> = { ...object };
    delete rest.status;
    world.serverOf(e.tenant).seed(PATHS.orders, status === undefined ? rest : { ...rest, status }, 'velero');
  },
};
