/**
 * The seeded generator of schedules (fast-check, so that a failing schedule shrinks to a small one): a setup (the
 * orders an installation starts with, one or two replicas, the consumer handoff on or off, the operator's Secrets
 * cluster-wide or per namespace, the admin a password or an application credential, tenant-b on a registered target
 * cluster or not, Keystone's workers (1–4) and the operator's requests in flight to it) and steps drawn from the event registry, each
 * after a wait of up to an hour and a half (mostly much less).
 */
import fc from 'fast-check';
import { eventArb } from './events';
import { ordersArb } from './events/orders';
import type { Schedule, Setup, Step } from './model';

export const setupArb: fc.Arbitrary<Setup> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  orders: ordersArb(),
  replicas: fc.constantFrom(1 as const, 2 as const),
  consumerHandoff: fc.boolean(),
  secretAccess: fc.constantFrom('cluster-wide' as const, 'namespaced' as const),
  admin: fc.constantFrom('password' as const, 'application-credential' as const),
  targetCluster: fc.boolean(),
  keystone: fc.record({ workers: fc.integer({ min: 1, max: 4 }), inFlight: fc.constantFrom(2, 4, 8), fleet: fc.constantFrom(0, 12) }),
});

/** Seconds before a step: often at once or within a minute, sometimes tens of minutes. */
export const waitArb = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 60 }), weight: 3 }, { arbitrary: fc.integer({ min: 60, max: 900 }), weight: 3 }, { arbitrary: fc.integer({ min: 900, max: 5400 }), weight: 1 });

export function scheduleArb(options: { readonly maxSteps: number }): fc.Arbitrary<Schedule> {
  return setupArb.chain((setup) => fc.array(fc.record<Step>({ wait: waitArb, event: eventArb(setup) }), { maxLength: options.maxSteps }).map((steps) => ({ setup, steps })));
}
