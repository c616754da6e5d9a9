/**
 * The registry of what can happen in a simulated run. Each entry is an {@link EventKind} (../model.ts): its name, what
 * it stands for, how often it is drawn, how its parameters are generated, and what it does to the world. A new
 * mechanism adds its events here in the same change (docs/testing.md, "The simulation").
 */
import fc from 'fast-check';
import type { EventInstance, EventKind, Setup } from '../model';
import { adoptOrder, deletionPolicy, revokePrevious, secretTemplate } from './delivery';
import { conflict, outage, secretAccess, watchFault } from './faults';
import { bystander, keystoneCapacity, keystoneOverload, raiseAll } from './keystone';
import { consent, createOrder, deleteOrder, identityLikeOrder, raise } from './orders';
import { fleetDefaults } from './policy';
import { crashAfter, failover, restart, staleStatus } from './processes';
import { anotherInstallation, tenantEdit } from './tenants';
import { upgrade } from './upgrade';

export const EVENTS: readonly EventKind[] = [createOrder, raise, deleteOrder, consent, identityLikeOrder, tenantEdit, anotherInstallation, restart, failover, crashAfter, staleStatus, outage, watchFault, conflict, secretAccess, upgrade, deletionPolicy, secretTemplate, revokePrevious, adoptOrder, fleetDefaults, keystoneCapacity, bystander, keystoneOverload, raiseAll] as readonly EventKind[];

/** The kind of an event instance. */
export function eventKind(event: EventInstance): EventKind {
  const kind = EVENTS.find((k) => k.kind === event.kind);
  if (!kind) throw new Error(`no event kind ${event.kind} in the registry (test/sim/events/index.ts)`);
  return kind;
}

/** Any event of the registry, weighted. */
export function eventArb(setup: Setup): fc.Arbitrary<EventInstance> {
  return fc.oneof(...EVENTS.map((k) => ({ arbitrary: k.generate(setup), weight: k.weight })));
}
