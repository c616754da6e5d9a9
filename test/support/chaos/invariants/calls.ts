/**
 * The invariants of what the operator costs its dependencies, as the simulation words them
 * (test/sim/invariants/restart.ts, dependencies.ts), checked on the requests the real operator made at its proxies in
 * front of Keystone and OpenBao and on its log lines (../timeline.ts):
 *
 * - `restart-costs-nothing`: orders converged when a replica becomes the leader (Ready, their generation observed, the
 *   Secret carrying the recorded credential, the backup holding it, Keystone holding nothing else of theirs but the
 *   superseded one in its grace, nothing due within the window) cost no OpenBao request on their backup paths and,
 *   when every order of their user converged, no Keystone request as that user, until a minute passed or the next
 *   event began, whatever is down.
 * - `waiters-recover-in-60s`: an order whose last pass waited on a dependency (its `waitsOn`) completes a pass within
 *   60 s of the dependency's return, and an order not Ready at the return (gated by what the dependency's absence took
 *   away: its ControlPlane's admin login, its user) is Ready within those 60 s, unless something else happened then.
 * - `outage-calls-bounded`: from a minute after the first pass that waited on it, an outage costs the dependency at most
 *   one pass per failing object per minute (two in a minute with an informer resync), two more for an object that
 *   starts failing in that minute, plus five for the probe of each dependency the waiters wait on (a probe's pass
 *   reaches every dependency its waiter needs: Keystone's probe reads OpenBao too), as the simulation allows; a minute
 *   in which another event begins or ends (a dependency's return wakes its waiters) is the event's, not the outage's.
 */
import { carried, disturbedBetween, leaderChangedBetween, nextDisturbanceAfter, ownCredentials, type Call, type Disturbance, type LogLine, type OrderInfo, type OrderStatusSeen, type Timeline, type Violation } from '../timeline';

const WINDOW_MS = 60_000;
const RECOVERY_MS = 60_000;
/** The probe's passes a minute once its pauses reached 15 s (plus up to 20 % jitter). */
const PROBE_PASSES = 5;
/** Requests of one actor this close together are one pass (a login and a list; the own and the former backup path). */
const PASS_GAP_MS = 2_000;

const violation = (invariant: string, at: number, message: string): Violation => ({ invariant, at, message });
const iso = (at: number) => new Date(at).toISOString();

/** Whether a Keystone request acts as the user: a login naming it, or a request on its application credentials. */
const asUser = (call: Call, user: OrderInfo['user']) => call.login === user.id || call.login === user.name || call.path.includes(`/users/${user.id}/application_credentials`);

/** Whether an OpenBao request reads or writes one of the order's backup paths (its own or the one 0.1.0 wrote). */
const onBackupOf = (call: Call, order: OrderInfo) => call.path.includes(`/${order.prefix}/`);

const describe = (calls: readonly Call[]) =>
  calls
    .slice(0, 4)
    .map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{32}/g, '<id>').replace(/[0-9a-f-]{36}/g, '<uid>')} → ${c.reset ? 'reset' : (c.status ?? '?')}`)
    .join('; ');

const DATE = (text: string | undefined) => (text === undefined ? Number.POSITIVE_INFINITY : Date.parse(text));

/**
 * Whether the order is converged at `at` as the last sample of the 30 s before shows it (an API server outage may keep
 * the samples from reading it; nothing of it changes meanwhile, and what was due by `at` counts as not converged), with
 * nothing due within the window.
 */
function converged(t: Timeline, order: OrderInfo, at: number): boolean {
  const sample = [...t.samples].reverse().find((s) => s.at <= at && s.at >= at - 30_000 && s.orders[order.key] && s.credentials);
  const seen = sample?.orders[order.key];
  if (!sample || !seen?.status || !sample.credentials) return false;
  const status = seen.status;
  if (status.conditions?.find((c) => c.type === 'Ready')?.status !== 'True' || status.observedGeneration !== seen.generation) return false;
  if (disturbedBetween(t, at - 1_000, at, ['consent', 'tenant-edit', 'raise'], order)) return false;
  const c = carried(t, order, sample);
  if (!c || c.id !== status.credentialID || seen.backup !== c.id) return false;
  if (DATE(status.nextRotation) <= at + WINDOW_MS || (status.previousCredentialID !== undefined && DATE(status.previousCredentialDeleteAt) <= at + WINDOW_MS)) return false;
  const recorded = new Set([status.credentialID, status.previousCredentialID]);
  return ownCredentials(t, order, sample.credentials).every((x) => recorded.has(x.id));
}

export function restartCostsNothing(t: Timeline): Violation[] {
  const out: Violation[] = [];
  for (const line of t.lines.filter((l) => l.msg === 'became the leader')) {
    const end = Math.min(line.at + WINDOW_MS, nextDisturbanceAfter(t, line.at) ?? Number.POSITIVE_INFINITY, t.ended);
    const orders = t.orders.filter((o) => converged(t, o, line.at));
    const inWindow = (c: Call) => c.at >= line.at && c.at < end;
    const seconds = Math.round((end - line.at) / 1000);
    for (const order of orders) {
      const openBao = t.openbao.filter((c) => inWindow(c) && onBackupOf(c, order));
      if (openBao.length > 0) out.push(violation('restart-costs-nothing', line.at, `${order.key} was converged when ${line.process} became the leader at ${iso(line.at)} and cost ${openBao.length} OpenBao requests in its first ${seconds} s (${describe(openBao)})`));
    }
    for (const user of new Map(t.orders.map((o) => [o.user.id, o.user])).values()) {
      if (!t.orders.filter((o) => o.user.id === user.id).every((o) => orders.includes(o))) continue;
      const keystone = t.keystone.filter((c) => inWindow(c) && asUser(c, user));
      if (keystone.length > 0) out.push(violation('restart-costs-nothing', line.at, `every order of user ${user.name} was converged when ${line.process} became the leader at ${iso(line.at)} and it made ${keystone.length} Keystone requests as that user in its first ${seconds} s (${describe(keystone)})`));
    }
  }
  return out;
}

/** How a failed pass names the dependency a disturbance took away (src/operator/credential/reconciler.ts). */
function dependencyOf(t: Timeline, d: Disturbance): string | undefined {
  return d.kind === 'keystone' ? t.keystoneDependency : d.kind === 'openbao' ? 'OpenBao' : d.kind === 'apiserver' ? 'the API server' : undefined;
}

const waitsOn = (line: LogLine, dependency: string) => String(line.waitsOn ?? '').split(', ').includes(dependency);
const reconciles = (t: Timeline) => t.lines.filter((l) => l.msg === 'reconcile');
const keyOf = (line: LogLine) => `${String(line.controller)} ${String(line.cluster ?? '')}/${String(line.key)}`;

export function waitersRecover(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const lines = reconciles(t).filter((l) => l.controller === 'KeystoneApplicationCredential');
  for (const d of t.disturbances) {
    const dependency = dependencyOf(t, d);
    if (!dependency) continue;
    const end = d.to + RECOVERY_MS;
    if (end > t.ended) continue;
    // Another event, or a new leader, in the minute after: what the order does then is theirs.
    if (disturbedBetween(t, d.to + 1, end) || leaderChangedBetween(t, d.to - 20_000, end)) continue;
    const last = new Map<string, LogLine>();
    const flagged = new Set<string>();
    for (const l of lines) if (l.at <= d.to) last.set(keyOf(l), l);
    for (const [key, l] of last) {
      if (l.result !== 'error' || !waitsOn(l, dependency)) continue;
      const after = lines.filter((x) => keyOf(x) === key && x.at > d.to && x.at <= end);
      if (after.some((x) => x.result === 'success' || x.result === 'requeue')) continue;
      const failed = after.map((x) => `${String(x.error ?? '').slice(0, 80)}, retried in ${String(x.retryInMs)} ms`).join('; ');
      out.push(violation('waiters-recover-in-60s', end, `${String(l.key)} waited on ${dependency}, which answered again at ${iso(d.to)}, and had no successful pass in the minute after (${after.length} failed${failed ? `: ${failed}` : ''})`));
      flagged.add(String(l.key));
    }
    // An order gated by what the dependency's absence took away (its ControlPlane's admin login, its user) waits on it
    // too, though its passes succeed and name no dependency: its status says it. Not Ready when the dependency answered
    // again, it is Ready within the minute.
    for (const order of t.orders) {
      if (flagged.has(order.key)) continue;
      const atReturn = [...t.samples].reverse().find((s) => s.at <= d.to && s.orders[order.key]?.status)?.orders[order.key]?.status;
      if (!atReturn || condition(atReturn, 'Ready')?.status !== 'False') continue;
      if (t.samples.some((s) => s.at > d.to && s.at <= end && condition(s.orders[order.key]?.status, 'Ready')?.status === 'True')) continue;
      const why = ['CredentialReady', 'DeliveryReady'].map((type) => `${type} ${condition(atReturn, type)?.reason ?? '?'}`).join(', ');
      out.push(violation('waiters-recover-in-60s', end, `${order.key} was not Ready (${why}) when ${dependency} answered again at ${iso(d.to)}, and was not Ready in the minute after`));
    }
  }
  return out;
}

const condition = (status: OrderStatusSeen | undefined, type: string) => status?.conditions?.find((c) => c.type === type);

/** Who a request acts for: the Keystone user it logs in as or whose credentials it touches, or the OpenBao path. */
function actorOf(call: Call): string {
  if (call.login) return call.login;
  const user = /\/users\/([^/]+)\//.exec(call.path);
  if (user) return user[1];
  return call.path.replace(/\/service-accounts\/.*$/, '').replace(/\/[0-9a-f-]{36}$/, '').replace(/^\/v1\/openstack\/(data|metadata)\//, '');
}

/** The passes among calls: one actor's requests with less than {@link PASS_GAP_MS} between them are one pass. */
export function passesOf(calls: readonly Call[]): number {
  const last = new Map<string, number>();
  let passes = 0;
  for (const c of [...calls].sort((a, b) => a.at - b.at)) {
    const actor = actorOf(c);
    const before = last.get(actor);
    if (before === undefined || c.at - before >= PASS_GAP_MS) passes++;
    last.set(actor, c.at ?? 0);
  }
  return passes;
}

export function outageCallsBounded(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const lines = reconciles(t);
  for (const d of t.disturbances) {
    if (d.kind !== 'keystone' && d.kind !== 'openbao') continue;
    const dependency = dependencyOf(t, d) as string;
    const calls = d.kind === 'keystone' ? t.keystone : t.openbao;
    const first = lines.find((l) => l.result === 'error' && waitsOn(l, dependency) && l.at >= d.from);
    if (!first) continue;
    const others = t.disturbances.filter((x) => x !== d).flatMap((x) => [x.from, x.to]);
    for (let from = first.at + 60_000; from + 60_000 <= d.to; from += 60_000) {
      const to = from + 60_000;
      if (leaderChangedBetween(t, from - 120_000, to) || others.some((at) => at >= from - 10_000 && at <= to)) continue;
      const passes = passesOf(calls.filter((c) => c.at >= from && c.at < to));
      const failed = lines.filter((l) => l.result === 'error' && l.at >= d.from && l.at < to);
      const firstFailure = new Map<string, number>();
      for (const l of failed) if (!firstFailure.has(keyOf(l))) firstFailure.set(keyOf(l), l.at);
      const failing = firstFailure.size;
      const entering = [...firstFailure.values()].filter((at) => at >= from).length;
      const probes = Math.max(1, new Set(failed.flatMap((l) => String(l.waitsOn ?? '').split(', ').filter(Boolean))).size);
      const resync = t.resyncMs > 0 && t.lines.some((l) => l.msg === 'controller started' && (from - l.at) % t.resyncMs > (to - l.at) % t.resyncMs);
      const allowed = failing * (resync ? 2 : 1) + 2 * entering + PROBE_PASSES * probes;
      if (passes > allowed) {
        out.push(
          violation(
            'outage-calls-bounded',
            to,
            `${d.kind} ${d.fault ?? ''}: ${passes} passes reached it in the minute from ${iso(from)}, with ${failing} objects failing, ${entering} of them new, waiting on ${probes} dependencies (allowed: ${allowed}: one of each, two more of a new one, and each probe's ${PROBE_PASSES})`,
          ),
        );
        break;
      }
    }
  }
  return out;
}
