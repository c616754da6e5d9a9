/**
 * What happens to a Keystone the operator shares with others (issue 48's pacing, src/keystone/pacing.ts): it is scaled
 * up or down, or slowed by other load on its hosts (../keystone.ts); another user logs in at a steady rate for a while
 * (the bystander); Keystone, or a rate limiter in front of it, answers 429 or 503 for a while, with or without a
 * `Retry-After`; and the platform team raises every order's generation at once (a fleet-wide rotation). Slow answers
 * past the client's timeout are the `outage` event's `slow` (./faults.ts).
 */
import fc from 'fast-check';
import type { EventKind } from '../model';
import { keystoneLoadOf } from '../keystone';
import { outageSecondsArb } from './faults';
import { raise } from './orders';

type KeystoneCapacity = { kind: 'keystone-capacity'; workers: number; slowdown: number };
type Bystander = { kind: 'bystander'; everySeconds: number; minutes: number };
type KeystoneOverload = { kind: 'keystone-overload'; status: 429 | 503; retryAfterSeconds?: number; seconds: number };
type RaiseAll = { kind: 'raise-all'; bystanderEverySeconds?: number };

export const keystoneCapacity: EventKind<KeystoneCapacity> = {
  kind: 'keystone-capacity',
  description: "Keystone's workers change (scaled up or down, 1–4), or it serves 2 or 4 times slower (other load on its hosts)",
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('keystone-capacity' as const), workers: fc.integer({ min: 1, max: 4 }), slowdown: fc.constantFrom(1, 1, 2, 4) }),
  apply: (world, e) => keystoneLoadOf(world)?.scale(e.workers, e.slowdown),
};

export const bystander: EventKind<Bystander> = {
  kind: 'bystander',
  description: 'another Keystone user logs in every 1, 2 or 5 s for a while (0 minutes: it stops)',
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('bystander' as const), everySeconds: fc.constantFrom(1, 2, 5), minutes: fc.constantFrom(0, 5, 20, 60) }),
  apply: (world, e) => keystoneLoadOf(world)?.bystand(e.minutes > 0 ? e.everySeconds * 1000 : undefined, e.minutes * 60_000),
};

export const keystoneOverload: EventKind<KeystoneOverload> = {
  kind: 'keystone-overload',
  description: 'Keystone (or a rate limiter in front of it) answers 429 or 503 for a while, with or without a Retry-After',
  weight: 1,
  generate: () =>
    fc.record(
      { kind: fc.constant('keystone-overload' as const), status: fc.constantFrom(429 as const, 503 as const), retryAfterSeconds: fc.constantFrom(1, 5, 30), seconds: outageSecondsArb },
      { requiredKeys: ['kind', 'status', 'seconds'] },
    ),
  apply: (world, e) => world.fault('keystone', { mode: 'status', status: e.status, ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}) }, e.seconds * 1000),
};

export const raiseAll: EventKind<RaiseAll> = {
  kind: 'raise-all',
  description: "the platform team raises every order's credentialGeneration at once (a fleet-wide rotation), maybe while the bystander logs in every 1 or 2 s for the next 5 minutes",
  weight: 3,
  generate: () => fc.record({ kind: fc.constant('raise-all' as const), bystanderEverySeconds: fc.constantFrom(1, 2) }, { requiredKeys: ['kind'] }),
  apply: (world, e) => {
    if (e.bystanderEverySeconds !== undefined) keystoneLoadOf(world)?.bystand(e.bystanderEverySeconds * 1000, 5 * 60_000);
    for (const { tenant, name } of world.orders()) void raise.apply(world, { kind: 'raise', tenant, name });
  },
};
