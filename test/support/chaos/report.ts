/**
 * The chaos run's report: the seed and the schedule (as JSON, which `--schedule FILE` runs again), the events as they
 * happened, what the run did (rotations, consumers' authentications, the operator's requests), and every violation.
 */
import { generationOf } from '../../../src/api';
import { INVARIANTS, judgeRejection } from './invariants';
import { describeStep, type ChaosSchedule } from './schedule';
import type { Timeline, Violation } from './timeline';

/** The generations each order's delivered Secret was seen carrying over the run. */
export function rotationsOf(t: Timeline): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const order of t.orders) {
    const generations = new Set<number>();
    for (const s of t.samples) {
      const id = s.orders[order.key]?.delivered?.id;
      const c = id && s.credentials?.find((x) => x.id === id);
      const g = c ? generationOf(order.prefix, c.name) : undefined;
      if (g !== undefined) generations.add(g);
    }
    out[order.key] = [...generations].sort((a, b) => a - b);
  }
  return out;
}

/** The events that happened, by kind (an outage by its fault): `kill 2`, `keystone down 1`, `tenant-edit 3`. */
export function eventCounts(t: Pick<Timeline, 'disturbances'>): string[] {
  const counts = new Map<string, number>();
  for (const d of t.disturbances) {
    const kind = d.fault !== undefined ? `${d.kind} ${d.fault}` : d.kind;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => `${kind} ${n}`);
}

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

/** The report's lines. */
export function reportLines(schedule: ChaosSchedule, t: Timeline, violations: readonly Violation[], failures: readonly string[]): string[] {
  const { seed, minutes: length, intervalSeconds } = schedule.setup;
  const lines = [
    `seed ${seed}, ${length} minutes, interval ${intervalSeconds} s (replay: npm run chaos -- --seed ${seed} --minutes ${length} --interval ${intervalSeconds}s)`,
    `schedule (${schedule.steps.length} events): ${JSON.stringify(schedule)}`,
    ...schedule.steps.map((s) => `  ${describeStep(s)}`),
    `events as they happened (from the run's start, s):`,
    ...t.disturbances
      .slice()
      .sort((a, b) => a.from - b.from)
      .map((d) => `  ${Math.round((d.from - t.started) / 1000)}–${Math.round((d.to - t.started) / 1000)} ${d.kind}${d.fault ? ` ${d.fault}` : ''}${d.order ? ` ${d.order}` : ''}${d.tenant ? ` tenant ${d.tenant}` : ''}`),
    ...failures.map((f) => `  NOT APPLIED: ${f}`),
  ];
  const rotations = rotationsOf(t);
  const rotated = Object.values(rotations).reduce((sum, g) => sum + Math.max(0, g.length - 1), 0);
  lines.push(`run: ${minutes(t.ended - t.started)}; generations delivered: ${Object.entries(rotations).map(([k, g]) => `${k} ${g.length} (${g[0] ?? '-'}–${g[g.length - 1] ?? '-'})`).join(', ')}; ${rotated} rotations`);
  lines.push(`events: ${t.disturbances.length} (${eventCounts(t).join(', ')})`);
  lines.push(
    `checked: ${INVARIANTS.length} invariants over ${t.samples.length} samples, ${t.probes.length} authentications, ${t.keystone.length + t.openbao.length} operator requests, ${t.lines.length} operator log lines and ${t.metrics.length} metrics samples`,
  );
  const probes = t.probes.length;
  const byOutcome = (o: string) => t.probes.filter((p) => p.outcome === o).length;
  const verdicts = t.probes.filter((p) => p.outcome === 'rejected').map((p) => judgeRejection(t, p));
  const count = (v: string) => verdicts.filter((x) => x === v).length;
  lines.push(`consumers: ${probes} authentications, ${byOutcome('rejected')} refused by Keystone (${count('tenant')} with a pair a tenant's edit put into the Secret, before its repair reached the consumer; ${count('expired')} with a credential past its Keystone expiry while an event stood in its rotation's way; ${verdicts.length - count('tenant') - count('expired')} broke held-credential-kept), ${byOutcome('unreachable')} with Keystone not answering the consumer`);
  lines.push(`samples: ${t.samples.length} (${t.samples.filter((s) => !s.credentials).length} without Keystone, ${t.samples.filter((s) => Object.keys(s.orders).length < t.orders.length).length} without every order); metrics samples: ${t.metrics.length}`);
  const perMinute = (calls: readonly { at: number }[]) => (calls.length / ((t.ended - t.started) / 60_000)).toFixed(1);
  lines.push(`operator's requests: Keystone ${t.keystone.length} (${perMinute(t.keystone)}/min), OpenBao ${t.openbao.length} (${perMinute(t.openbao)}/min); leader changes: ${t.lines.filter((l) => l.msg === 'became the leader').length}`);
  lines.push(violations.length === 0 ? 'violations: none' : `violations (${violations.length}):`);
  for (const v of violations) lines.push(`  +${Math.round((v.at - t.started) / 1000)} s ${v.invariant}: ${v.message}`);
  return lines;
}
