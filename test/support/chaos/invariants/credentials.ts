/**
 * The invariants of the credentials, as the simulation words them (test/sim/invariants/credentials.ts, backup.ts),
 * checked on what the chaos run saw at the real Keystone, OpenBao and API server (../timeline.ts):
 *
 * - `held-credential-kept`: no credential that a delivered Secret or a backup holds, or that a consumer may still hold
 *   (its grace period since the Secret stopped carrying it has not ended), is deleted: every DELETE the operator sent
 *   Keystone is held to that; and the consumers never fail (a failure is excused only by what a consumer cannot
 *   blame the operator for: a pair a tenant's edit put into the Secret, until it is repaired, or a credential that
 *   reached its Keystone expiry while something stood in its rotation's way).
 * - `foreign-untouched`: credentials of the users the operator did not make are never deleted.
 * - `at-most-two-credentials`: ≤ 2 credentials per order in every Keystone listing.
 * - `backup-holds-delivered`: the backup comes first (whenever the Secret carries a generation, the backup holds it or
 *   a later one), and once the order is steady (Keystone holds nothing newer) the backup holds the delivered one.
 * - `swept-in-time`: no superseded credential outlives its sweep (its grace period after the Secret stopped carrying
 *   it) by more than {@link SWEEP_SLACK_MS}, unless something stood in the sweep's way meanwhile.
 * - `tenant-edit-repaired` (the spec's "An edited key is rewritten and a deleted Secret is written again"; not in the
 *   simulation's list): a tenant's edit of a delivered Secret is undone within {@link REPAIR_MS}, unless the order was
 *   frozen or the operator or a dependency was down meanwhile.
 */
import { carried, carriedLog, credentialsById, disturbedBetween, lastCarried, ownCredentials, type Disturbance, type OrderInfo, type ProbeResult, type Timeline, type Violation } from '../timeline';

/** The operator rounds instants down to the second: a deletion may come up to a second before the grace period's end. */
const TOLERANCE_MS = 1_000;
/** How late a sweep may come after its grace period ends: the order's wake-up, its pass and a retry. */
export const SWEEP_SLACK_MS = 60_000;
/** How long a tenant's edit may stand before the operator rewrites the Secret. */
export const REPAIR_MS = 60_000;
/** How long after a mismatch of the backup it must last to count (a pass between its backup write and the sample). */
const PERSIST_MS = 10_000;

/** What stands in a sweep's, a repair's or a rotation's way: everything but a tenant's own edits and raises. */
const IN_THE_WAY: readonly Disturbance['kind'][] = ['keystone', 'openbao', 'apiserver', 'kill', 'handover', 'consent'];

const violation = (invariant: string, at: number, message: string): Violation => ({ invariant, at, message });
const iso = (at: number) => new Date(at).toISOString();

/** The order a credential of the run belongs to, with its generation. */
function ownerOf(t: Timeline, credential: { id: string; name: string; userId: string }): { order: OrderInfo; generation: number } | undefined {
  for (const order of t.orders) {
    const [own] = ownCredentials(t, order, [credential]);
    if (own) return { order, generation: own.generation };
  }
  return undefined;
}

/** The DELETEs of application credentials the operator sent Keystone that it carried out (2xx), with the id. */
function deletions(t: Timeline): { at: number; id: string }[] {
  return t.keystone.flatMap((c) => {
    const m = /\/application_credentials\/([^/?]+)/.exec(c.path);
    return c.method === 'DELETE' && m && c.status !== undefined && c.status < 300 && c.at <= t.ended ? [{ at: c.at, id: m[1] }] : [];
  });
}

/** When the order's Secret was seen carrying its own pair again after `from` (a repair), if it was. */
function repairedAfter(t: Timeline, order: OrderInfo, from: number): number | undefined {
  return carriedLog(t, order).find((c) => c.at > from && c.id !== null)?.at;
}

/**
 * Why Keystone refused a consumer's authentication: `tenant` (a pair a tenant's edit put into the Secret, before the
 * repair reached the consumer), `expired` (the credential reached its Keystone expiry while something stood in its
 * rotation's way), or what breaks the rule.
 */
export function judgeRejection(t: Timeline, p: ProbeResult): 'tenant' | 'expired' | { readonly message: string } {
  const order = t.orders.find((o) => o.key === p.order) as OrderInfo;
  const credential = p.id === undefined ? undefined : credentialsById(t).get(p.id);
  const own = credential && ownCredentials(t, order, [credential])[0];
  const parked = own && t.samples.find((s) => s.orders[order.key]?.parked[own.generation] !== undefined)?.orders[order.key]?.parked[own.generation];
  const who = `the ${p.consumer} consumer of ${order.key}`;
  if (!own || parked !== p.secret) {
    // Not a pair the operator delivered: a tenant's edit, excused from the edit until the repair reached the consumer.
    const edit = [...t.disturbances].reverse().find((d) => d.kind === 'tenant-edit' && order.key.endsWith(`/${d.order}`) && d.from <= p.at);
    const repaired = edit && repairedAfter(t, order, edit.to);
    const lag = (p.consumer === 'lagging' ? t.laggingRefreshMs : 0) + 2_000;
    if (edit && (repaired === undefined || p.at <= repaired + lag)) return 'tenant';
    return { message: `${who} held a pair that is none of the order's credentials with its parked secret (id ${p.id ?? 'none'}), and no tenant's edit explains it` };
  }
  if (credential.expiresAt !== undefined && credential.expiresAt - TOLERANCE_MS <= p.at) {
    if (disturbedBetween(t, credential.expiresAt - order.intervalMs - order.graceMs, credential.expiresAt, IN_THE_WAY, order)) return 'expired';
    return { message: `${who}: generation ${own.generation} reached its Keystone expiry (${iso(credential.expiresAt)}) with nothing in its rotation's way` };
  }
  const last = lastCarried(t, credential.id, p.at);
  return { message: `${who}: Keystone refused generation ${own.generation} (${credential.id})${last === undefined ? '' : `, ${Math.round((p.at - last) / 1000)} s after the delivered Secret was last seen carrying it (grace period ${order.graceMs / 1000} s)`}` };
}

export function heldCredentialKept(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const byId = credentialsById(t);
  const foreign = new Set(t.foreign);
  for (const d of deletions(t)) {
    const credential = byId.get(d.id);
    const owner = credential && !foreign.has(d.id) ? ownerOf(t, credential) : undefined;
    if (!credential || !owner) continue;
    // At its Keystone expiry it authenticates nobody any more.
    if (credential.expiresAt !== undefined && credential.expiresAt - TOLERANCE_MS <= d.at) continue;
    const { order, generation } = owner;
    const last = lastCarried(t, d.id, d.at);
    if (last !== undefined && d.at < last + order.graceMs - TOLERANCE_MS) {
      out.push(violation('held-credential-kept', d.at, `${order.key}: generation ${generation} deleted ${Math.round((d.at - last) / 1000)} s after its delivered Secret was last seen carrying it, inside its grace period of ${order.graceMs / 1000} s`));
      continue;
    }
    const before = [...t.samples].reverse().find((s) => s.at <= d.at && s.orders[order.key]?.backup !== undefined);
    const after = t.samples.find((s) => s.at > d.at && s.orders[order.key]?.backup !== undefined);
    if (before?.orders[order.key]?.backup === d.id && after?.orders[order.key]?.backup === d.id) {
      out.push(violation('held-credential-kept', d.at, `${order.key}: generation ${generation} deleted while its backup holds it`));
    }
  }
  for (const p of t.probes) {
    const verdict = p.outcome === 'rejected' ? judgeRejection(t, p) : undefined;
    if (verdict && typeof verdict !== 'string') out.push(violation('held-credential-kept', p.at, verdict.message));
  }
  return out;
}

export function foreignUntouched(t: Timeline): Violation[] {
  const foreign = new Set(t.foreign);
  const out = deletions(t)
    .filter((d) => foreign.has(d.id))
    .map((d) => violation('foreign-untouched', d.at, `a credential the operator did not make (${d.id}) was deleted by it`));
  const last = [...t.samples].reverse().find((s) => s.credentials);
  for (const id of foreign) {
    const seen = credentialsById(t).get(id);
    const expired = seen?.expiresAt !== undefined && seen.expiresAt <= (last?.at ?? 0);
    if (last && !expired && !last.credentials?.some((c) => c.id === id)) out.push(violation('foreign-untouched', last.at, `a credential the operator did not make (${id}) is gone from Keystone`));
  }
  return out;
}

export function atMostTwo(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  for (const s of t.samples) {
    if (!s.credentials) continue;
    for (const order of t.orders) {
      const own = ownCredentials(t, order, s.credentials);
      const key = `${order.key}:${own.map((c) => c.id).sort().join(',')}`;
      if (own.length <= 2 || reported.has(key)) continue;
      reported.add(key);
      out.push(violation('at-most-two-credentials', s.at, `${order.key} holds ${own.length} credentials in Keystone: generations ${own.map((c) => c.generation).sort((a, b) => a - b).join(', ')}`));
    }
  }
  return out;
}

export function backupHoldsDelivered(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  for (const order of t.orders) {
    let mismatch: { since: number; key: string } | undefined;
    for (const s of t.samples) {
      const c = carried(t, order, s);
      const backup = s.orders[order.key]?.backup;
      if (!c || backup === undefined || !s.credentials) continue;
      const own = ownCredentials(t, order, s.credentials);
      const held = own.find((x) => x.id === backup);
      const report = (message: string) => {
        if (reported.has(`${order.key}:${message}`)) return;
        reported.add(`${order.key}:${message}`);
        out.push(violation('backup-holds-delivered', s.at, `${order.key}: ${message}`));
      };
      // The sample reads the Secret before the backup: the backup may be ahead of it, never behind. (A credential the
      // listing after it does not show, e.g. a successor discarded meanwhile, is left to the steady rule below.)
      if (backup === null || (held && held.generation < c.generation)) report(`the delivered Secret carries generation ${c.generation} while the backup holds ${held ? `generation ${held.generation}` : 'nothing'} (the backup comes first)`);
      const steady = !own.some((x) => x.generation > c.generation);
      const key = `${c.id}:${backup}`;
      if (backup === c.id || !steady) mismatch = undefined;
      else if (mismatch?.key !== key) mismatch = { since: s.at, key };
      else if (s.at - mismatch.since >= PERSIST_MS) report(`steady on generation ${c.generation} since ${iso(mismatch.since)} and its backup holds ${held ? `generation ${held.generation}` : (backup ?? 'nothing')}`);
    }
  }
  return out;
}

export function sweptInTime(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  for (const order of t.orders) {
    const log = carriedLog(t, order);
    for (const s of t.samples) {
      const c = carried(t, order, s);
      if (!c || !s.credentials) continue;
      // Since when the Secret carries this credential: after the last sample that carried another one.
      const earlier = log.filter((x) => x.at <= s.at && x.id !== null && x.id !== c.id).pop();
      const since = log.find((x) => x.at > (earlier?.at ?? -Infinity) && x.id === c.id)?.at ?? s.at;
      for (const x of ownCredentials(t, order, s.credentials)) {
        if (x.id === c.id || x.generation > c.generation || reported.has(x.id)) continue;
        const due = Math.max(lastCarried(t, x.id, s.at) ?? 0, since) + order.graceMs;
        if (s.at <= due + SWEEP_SLACK_MS || disturbedBetween(t, due - order.graceMs, s.at, IN_THE_WAY, order)) continue;
        reported.add(x.id);
        out.push(violation('swept-in-time', s.at, `${order.key}: generation ${x.generation} is still in Keystone ${Math.round((s.at - due) / 1000)} s after its sweep was due (generation ${c.generation} delivered since ${iso(since)})`));
      }
    }
  }
  return out;
}

export function tenantEditRepaired(t: Timeline): Violation[] {
  const out: Violation[] = [];
  for (const d of t.disturbances.filter((x) => x.kind === 'tenant-edit')) {
    const order = t.orders.find((o) => o.key.endsWith(`/${d.order}`));
    if (!order) continue;
    const repaired = repairedAfter(t, order, d.to);
    const end = repaired ?? t.ended;
    if (end - d.to <= REPAIR_MS || disturbedBetween(t, d.to, end, IN_THE_WAY, order)) continue;
    out.push(violation('tenant-edit-repaired', end, `${order.key}: a tenant's edit of its Secret (${d.fault ?? 'edit'}) at ${iso(d.to)} ${repaired ? `was undone only ${Math.round((repaired - d.to) / 1000)} s later` : 'was never undone'}`));
  }
  return out;
}
