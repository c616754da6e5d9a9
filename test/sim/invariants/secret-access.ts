/**
 * The namespaced Secret access (docs: "RBAC"): an object whose namespace's Secrets the operator may not read is told so
 * once (`SecretAccessNotGranted`) and then costs nothing, no pass of it, until something changes: the schedule's next
 * event (a grant among them), a restart, a fault, or the informers' periodic resync (test/e2e/secret-access.test.ts
 * holds the real operator to the same: no pass of the order in a quiet window; issue 46, finding 9).
 */
import type { Invariant } from '../model';
import { PATHS } from '../objects';

/** The controller that reconciles each kind's collection. */
const CONTROLLERS: Readonly<Record<string, string>> = {
  [PATHS.orders]: 'KeystoneApplicationCredential',
  [PATHS.users]: 'KeystoneUser',
  [PATHS.projects]: 'KeystoneProject',
  [PATHS.assignments]: 'KeystoneRoleAssignment',
};

const REFUSED = 'SecretAccessNotGranted';
/** The pass that the refusal's own status write wakes, and the event's way back, are part of the refusal. */
const SETTLE_MS = 1_000;
/**
 * How long after a fault its refusal may still stand: a list the API server refused during an outage (a 403 of every
 * request among them) is probed again after at most 10 s plus 20 % jitter (docs/install/namespaced.md, "The probe"), and
 * the probe that finds the namespace readable again reconciles what waited on it (the refusal recorded, its status write
 * the first the API server took after the outage).
 */
const PROBE_REACH_MS = 12_000;

const refused = (status: unknown) => ((status as { conditions?: { reason?: string }[] } | undefined)?.conditions ?? []).some((c) => c.reason === REFUSED);

export const refusedCostsNothing: Invariant = {
  name: 'refused-costs-nothing',
  description: "an object whose namespace's Secrets are refused gets no pass once it says so, until something changes",
  watch(world, report) {
    /** `controller/cluster/namespace/name` → when its refusal was recorded. */
    const since = new Map<string, number>();
    world.hooks.change.push((change) => {
      const controller = CONTROLLERS[change.collection];
      if (!controller) return;
      const key = `${controller}/${change.cluster === 'target' ? 'edge' : ''}/${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      if (change.type !== 'DELETED' && refused(change.object.status)) {
        if (!refused(change.old?.status)) since.set(key, world.time.now());
      } else since.delete(key);
    });
    world.hooks.line.push((line) => {
      if (line.msg !== 'reconcile') return;
      const key = `${String(line.controller)}/${String(line.cluster ?? '')}/${String(line.key)}`;
      const from = since.get(key);
      const now = world.time.now();
      if (from === undefined || now < from + SETTLE_MS) return;
      if ((world.nextEventAfter(from) ?? Infinity) <= now || world.restartedBetween(from, now) || world.faultedBetween(Math.min(from, now - PROBE_REACH_MS), now) || world.resyncedBetween(from, now)) return;
      report(`${key.split('/').slice(2).join('/')} (${String(line.controller)}) had a pass ${Math.round((now - from) / 1000)} s after it recorded ${REFUSED}, with nothing changed since (${String(line.reason ?? line.result)})`);
      since.delete(key);
    });
    return {};
  },
};
