/**
 * The invariants of issue 48's rotation policy (rotation windows, jitter, fleet defaults: src/lifecycle/schedule.ts,
 * window.ts, rotation.ts, src/plane/policy.ts), judged by the simulation's own reading of the rules (./policy-model.ts):
 *
 * - `scheduled-rotation-on-time`: a scheduled rotation starts at or after lastRotation + gracePeriod, at or before the
 *   reference's nextRotation plus a pass's latency; under an applied window inside an opening, unless none lies between
 *   the earliest start and due (then not before the jittered time); without one, not before the jittered time;
 * - `next-rotation-bounded-stable`: every status.nextRotation the operator records lies in [earliest, due] (without an
 *   applied window in [max(earliest, due − jitter span), due], and exactly the reference's nextRotation with no window
 *   applied and no jitter: off by default), and while lastRotation and the policy stay, it never moves before it passes
 *   (restarts and failovers included);
 * - `forced-never-waits`: a raised credentialGeneration mints at the next pass, whatever the window;
 * - `defaults-resolved`: status.policy is the policy in force with each field's source (absent without fleet defaults
 *   or with refused ones); DefaultsRefused and RotationWindowRefused are said only of a refused combination.
 *
 * A status's times are judged only as a converged pass writes them (every condition True), and a status or an action
 * only once what it reads has settled: the order's spec and the ControlPlane unchanged
 * for {@link SETTLE_MS} and the API servers answering since (the operator acts on its caches); `defaults-resolved`
 * asks that of the start of the pass that wrote the status (a pass may wait minutes on its dependencies).
 */
import { CredentialReason, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import type { Invariant } from '../model';
import { PATHS, type Tenant } from '../objects';
import type { SimWorld } from '../sim-world';
import type { Obj } from '../../unit/kube/fake-api-server';
import { boundsOf, ceilSecond, expectedPolicy, floorSecond, policyDiff } from './policy-model';

const OPERATOR = 'keystone-appcred-operator';
/** How long the inputs of a pass must have stood before it is judged by them. */
const SETTLE_MS = 10_000;
/** A pass's latency: how far past its time a scheduled rotation may start with everything answering. */
const PASS_LATENCY_MS = 10_000;
/** How soon a raised generation must mint with nothing else going on. */
const FORCED_WITHIN_MS = 60_000;

type Status = KeystoneApplicationCredentialStatus & { conditions?: { type: string; status?: string; reason?: string }[] };

/** Every condition True: the pass converged (a failing pass may leave times of the step before: the next one writes them). */
const converged = (status: Status) => (status.conditions ?? []).length > 0 && (status.conditions ?? []).every((c) => c.status === 'True');

/** When each order's policy inputs last changed (its spec by a tenant, the ControlPlane), shared by the invariants. */
const inputs = new WeakMap<SimWorld, { cp: number; orders: Map<string, number> }>();

function inputsOf(world: SimWorld) {
  const known = inputs.get(world);
  if (known) return known;
  const created = { cp: 0, orders: new Map<string, number>() };
  inputs.set(world, created);
  world.hooks.change.push((change) => {
    if (change.collection === PATHS.controlPlanes) created.cp = change.at;
    if (change.collection === PATHS.orders && change.fieldManager !== OPERATOR && JSON.stringify(change.old?.spec) !== JSON.stringify(change.object.spec)) {
      created.orders.set(`${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`, change.at);
    }
  });
  return created;
}

/** When the inputs of `key`'s passes last changed: its spec by a tenant, or the ControlPlane. */
function inputsSince(world: SimWorld, key: string): number {
  const known = inputsOf(world);
  return Math.max(known.cp, known.orders.get(key) ?? 0);
}

/**
 * Whether what a pass of `key` read at `at` has settled: inputs unchanged for SETTLE_MS, the API servers answering
 * (`since`: when they last changed, as of `at`).
 */
function settled(world: SimWorld, key: string, at: number, since = inputsSince(world, key)): boolean {
  const tenant = key.split('/')[0] ?? '';
  return at - since >= SETTLE_MS && !world.faultedBetween(since, at, ['api', 'target']) && !world.frozenBetween(tenant, since, at);
}

const keyOf = (o: Obj) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const refOf = (key: string) => ({ tenant: key.split('/')[0] as Tenant, name: key.split('/')[1] ?? '' });
const iso = (t: number) => new Date(t).toISOString();

export const scheduledOnTime: Invariant = {
  name: 'scheduled-rotation-on-time',
  description: 'a scheduled rotation starts after lastRotation + grace, by nextRotation (+ a pass), inside an opening of an applied window when one lies before due, else not before the jittered time',
  watch(world, report) {
    inputsOf(world);
    world.hooks.line.push((line) => {
      if (line.msg !== 'action' || line.action !== 'mint' || line.outcome !== 'done' || line.why !== 'schedule due') return;
      const key = String(line.key);
      const object = world.order(refOf(key));
      const now = world.time.now();
      if (!object || !settled(world, key, now)) return;
      const policy = expectedPolicy(world, object);
      const bounds = boundsOf(policy, (object.status ?? {}) as Status);
      if (!bounds) return report(`${key}: a scheduled rotation started at ${iso(now)} with the schedule off (interval ${policy.rotation.interval ?? 'none'})`);
      const early = (what: string, t: number) => report(`${key}: a scheduled rotation started at ${iso(now)}, before ${what} ${iso(t)} (policy ${JSON.stringify(policy.rotation)})`);
      if (now < floorSecond(bounds.earliest)) return early('lastRotation + gracePeriod', bounds.earliest);
      const quiet = !world.faultedBetween(bounds.due, now) && !world.restartedBetween(bounds.due - PASS_LATENCY_MS, now);
      if (now > ceilSecond(bounds.due) + PASS_LATENCY_MS && quiet) return report(`${key}: a scheduled rotation started at ${iso(now)}, past its due time ${iso(bounds.due)} with everything answering`);
      if (policy.window && policy.window.openWithin(bounds.earliest, bounds.due)) {
        if (!policy.window.openAt(now) && !policy.window.openAt(now - PASS_LATENCY_MS) && quiet) report(`${key}: a scheduled rotation started at ${iso(now)}, outside its window ${JSON.stringify(policy.window.window)}, which opens between ${iso(bounds.earliest)} and ${iso(bounds.due)}`);
        return;
      }
      if (now < floorSecond(bounds.jittered)) early('its jittered time', bounds.jittered);
    });
    return {};
  },
};

export const nextRotationBounded: Invariant = {
  name: 'next-rotation-bounded-stable',
  description: "status.nextRotation lies in [max(lastRotation + grace, due − jitter span), due] (in [earliest, due] under a window; the reference's with neither), and does not move before it passes while lastRotation and the policy stay",
  watch(world, report) {
    inputsOf(world);
    // By `uid lastRotation expiry policy`: the nextRotation last recorded.
    const recorded = new Map<string, number>();
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.orders || change.fieldManager !== OPERATOR || change.type === 'DELETED') return;
      const status = (change.object.status ?? {}) as Status;
      const key = keyOf(change.object);
      if (status.nextRotation === undefined || !converged(status) || !settled(world, key, change.at)) return;
      const policy = expectedPolicy(world, change.object);
      const bounds = boundsOf(policy, status);
      const next = Date.parse(status.nextRotation);
      if (!bounds) return report(`${key}: status.nextRotation ${status.nextRotation} recorded with the schedule off`);
      const where = `${key}: status.nextRotation ${status.nextRotation} (lastRotation ${status.lastRotation ?? '-'}, policy ${JSON.stringify(policy.rotation)})`;
      if (next > ceilSecond(bounds.due)) return report(`${where} is after the reference's nextRotation ${iso(ceilSecond(bounds.due))}`);
      const lowest = policy.window ? bounds.earliest : bounds.jittered;
      if (next < floorSecond(lowest)) return report(`${where} is before ${iso(lowest)}, the earliest ${policy.window ? 'start (lastRotation + gracePeriod)' : 'jittered start'}`);
      if (!policy.window && policy.jitterPercent === 0 && next !== ceilSecond(bounds.due)) return report(`${where} is not the reference's nextRotation ${iso(ceilSecond(bounds.due))} (no window applied, no jitter)`);
      const same = `${change.object.metadata.uid ?? ''} ${status.lastRotation ?? ''} ${status.credentialExpiresAt ?? ''} ${JSON.stringify(policy.rotation)}`;
      const before = recorded.get(same);
      recorded.set(same, next);
      if (before !== undefined && before !== next && before > change.at) report(`${where} moved from ${iso(before)}, which had not passed, with lastRotation and the policy unchanged`);
    });
    return {};
  },
};

export const forcedNeverWaits: Invariant = {
  name: 'forced-never-waits',
  description: 'a raised credentialGeneration starts its rotation at the next pass, whatever the window',
  watch(world, report) {
    const pending: { key: string; generation: number; at: number }[] = [];
    const minted = new Map<string, { generation: number; at: number }[]>();
    world.hooks.line.push((line) => {
      if (line.msg !== 'action' || line.action !== 'mint' || line.outcome !== 'done') return;
      const key = String(line.key);
      minted.set(key, [...(minted.get(key) ?? []), { generation: Number(line.generation), at: world.time.now() }]);
    });
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.orders || change.fieldManager !== 'kubectl' || change.type !== 'MODIFIED') return;
      const raised = (change.object.spec as { credentialGeneration?: number }).credentialGeneration ?? 1;
      const status = (change.object.status ?? {}) as Status;
      // A raise the order can act on at once: it holds a credential below it, no grace period runs.
      if (status.credentialGeneration === undefined || raised <= status.credentialGeneration || status.previousCredentialGeneration !== undefined) return;
      if (raised <= ((change.old?.spec as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 1)) return;
      pending.push({ key: keyOf(change.object), generation: raised, at: change.at });
    });
    return {
      check() {
        const now = world.time.now();
        for (let i = pending.length - 1; i >= 0; i--) {
          const p = pending[i];
          if (now - p.at < FORCED_WITHIN_MS) continue;
          pending.splice(i, 1);
          const end = p.at + FORCED_WITHIN_MS;
          if ((minted.get(p.key) ?? []).some((m) => m.generation >= p.generation && m.at >= p.at && m.at <= end)) continue;
          const object = world.order(refOf(p.key));
          const tenant = p.key.split('/')[0] ?? '';
          const next = world.nextEventAfter(p.at);
          const disturbed = !object || object.metadata.deletionTimestamp !== undefined || world.faultedBetween(p.at - FORCED_WITHIN_MS, end) || world.restartedBetween(p.at - FORCED_WITHIN_MS, end) || world.frozenBetween(tenant, p.at - FORCED_WITHIN_MS, end) || world.secretsRefused.has(tenant) || world.adoptions.has(p.key) || world.upgraded || (next !== undefined && next <= end);
          if (disturbed) continue;
          const policy = expectedPolicy(world, object);
          report(`${p.key}: credentialGeneration raised to ${p.generation} at ${iso(p.at)}, nothing minted within ${FORCED_WITHIN_MS / 1000} s with everything answering (policy ${JSON.stringify(policy.rotation)})`);
        }
      },
    };
  },
};

export const defaultsResolved: Invariant = {
  name: 'defaults-resolved',
  description: 'status.policy is the policy in force with its sources (none without fleet defaults or with refused ones); DefaultsRefused and RotationWindowRefused only of a refused combination',
  watch(world, report) {
    inputsOf(world);
    // A write is judged by what its pass read: once that pass's reconcile line tells when it began, and only if its
    // inputs had settled by then. A pass that waits minutes on OpenBao and Keystone (timeouts, Retry-After) writes what
    // it decided from the spec and ControlPlane it read at its start; a change meanwhile is the next pass's.
    const pending: { key: string; at: number; since: number; problems: string[] }[] = [];
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.orders || change.fieldManager !== OPERATOR || change.type === 'DELETED') return;
      const key = keyOf(change.object);
      if (!settled(world, key, change.at)) return;
      const status = (change.object.status ?? {}) as Status;
      const policy = expectedPolicy(world, change.object);
      const problems: string[] = [];
      const diff = policyDiff(policy, status.policy);
      if (diff) problems.push(`${key}: ${diff}`);
      const reasons = new Set((status.conditions ?? []).map((c) => c.reason));
      if (reasons.has(CredentialReason.DefaultsRefused) && !policy.defaultsRefused) problems.push(`${key}: says DefaultsRefused of a combination that keeps its rules (${JSON.stringify(policy.rotation)})`);
      if (reasons.has(CredentialReason.RotationWindowRefused) && !policy.windowRefused) problems.push(`${key}: says RotationWindowRefused of a window that opens in time (${JSON.stringify(policy.rotation)})`);
      if (problems.length > 0) pending.push({ key, at: change.at, since: inputsSince(world, key), problems });
    });
    return {
      check() {
        for (const write of [...pending]) {
          const line = world.reconciles.find((l) => l.controller === 'KeystoneApplicationCredential' && l.key === write.key && Date.parse(String(l.time)) >= write.at);
          if (!line) continue;
          pending.splice(pending.indexOf(write), 1);
          const began = Date.parse(String(line.time)) - Number(line.durationMs ?? 0);
          if (settled(world, write.key, began, write.since)) for (const problem of write.problems) report(`${problem} (written at ${iso(write.at)} by a pass begun at ${iso(began)})`);
        }
      },
    };
  },
};
