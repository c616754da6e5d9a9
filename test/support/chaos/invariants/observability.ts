/**
 * What the platform team's monitoring and logs read, as the simulation words it (test/sim/invariants/observability.ts,
 * secrets.ts), checked on the real operator's metrics and on everything the chaos run collected:
 *
 * - `status-reasons-have-series`: every condition (Ready, CredentialReady, DeliveryReady) an order's status carries
 *   has its `keystone_appcred_credential_condition` series with its status and reason on the leader; a mismatch counts
 *   once it lasted two metric samples at least ten seconds apart (a pass between its status write and its metrics is
 *   not one), and not in a new leader's first 30 s (its first pass of each order).
 * - `no-secret-anywhere`: no minted or parked secret, password or token in any log line, Event, status or metrics text
 *   (test/support/secret-scan.ts: as it is, base64, JSON-escaped, URL-encoded).
 */
import { scanForSecrets } from '../../secret-scan';
import { labelsOf, type Timeline, type Violation } from '../timeline';

const METRIC = 'keystone_appcred_credential_condition';
const TYPES = ['Ready', 'CredentialReady', 'DeliveryReady'];
const PERSIST_MS = 10_000;
const WARM_MS = 30_000;

export function reasonSeries(t: Timeline): Violation[] {
  const out: Violation[] = [];
  const reported = new Set<string>();
  /** Mismatch key → when it was first seen, reset when a sample does not show it. */
  let open = new Map<string, number>();
  for (const m of t.metrics) {
    const led = t.lines.filter((l) => l.process === m.process && l.msg === 'became the leader' && l.at <= m.at).pop();
    if (!led || m.at - led.at < WARM_MS) {
      open = new Map();
      continue;
    }
    const exposed = Object.entries(m.series)
      .filter(([series, value]) => value === 1 && labelsOf(series).name === METRIC)
      .map(([series]) => labelsOf(series).labels);
    const now = new Map<string, number>();
    for (const order of t.orders) {
      const [namespace, name] = order.key.split('/');
      for (const c of (m.conditions[order.key] ?? []).filter((x) => TYPES.includes(x.type))) {
        const has = exposed.some((l) => l.namespace === namespace && l.name === name && l.type === c.type && l.status === c.status && l.reason === c.reason && l.cluster === undefined);
        if (has) continue;
        const key = `${order.key} ${c.type}=${c.status}/${c.reason}`;
        const since = open.get(key) ?? m.at;
        now.set(key, since);
        if (m.at - since >= PERSIST_MS && !reported.has(key)) {
          reported.add(key);
          out.push({ invariant: 'status-reasons-have-series', at: m.at, message: `${order.key}: its ${c.type} condition says ${c.status}/${c.reason} and the leader ${m.process} has exported no such series since ${new Date(since).toISOString()}` });
        }
      }
    }
    open = now;
  }
  return out;
}

/** The sources among `texts` that carry one of `secrets`, as violations (the secrets themselves never printed). */
export function noSecretAnywhere(texts: Iterable<{ source: string; text: string }>, secrets: Iterable<string>, at: number): Violation[] {
  return scanForSecrets(texts, secrets).map((source) => ({ invariant: 'no-secret-anywhere', at, message: `${source} carries a secret` }));
}
