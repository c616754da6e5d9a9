/**
 * Runs a schedule: builds its world, lets every invariant of the registry watch it, starts the operator, and plays
 * the steps (each after its wait of virtual time), checking the invariants every 30 virtual seconds and after every
 * step; then a quiet tail (until every fault in force has ended, and fifteen virtual minutes more) and the final checks. Deterministic: the same
 * schedule gives the same run, to the digest of everything that happened (`trace`).
 */
import { createHash } from 'node:crypto';
import { EPOCH } from './clock';
import { eventKind } from './events';
import { INVARIANTS } from './invariants';
import type { Invariant, InvariantChecks, RunResult, Schedule, Violation } from './model';
import { SimWorld } from './sim-world';

export interface RunOptions {
  /** The quiet tail after the last step, in ms. @default 15 minutes */
  readonly tailMs?: number;
  /** Stop at the first violation (a search: the soak, fast-check). @default false */
  readonly stopAtFirst?: boolean;
  /** The invariants to check. @default every one of the registry */
  readonly invariants?: readonly Invariant[];
  /** Called with the world before it starts (a named case may arrange more). */
  readonly arrange?: (world: SimWorld) => void;
}

const CHECK_EVERY_MS = 30_000;

export async function runSchedule(schedule: Schedule, options: RunOptions = {}): Promise<RunResult> {
  const world = SimWorld.create(schedule.setup);
  const violations: Violation[] = [];
  try {
    const watched: { invariant: Invariant; checks: InvariantChecks }[] = (options.invariants ?? INVARIANTS).map((invariant) => ({
      invariant,
      checks: invariant.watch(world, (message) => void violations.push({ invariant: invariant.name, at: world.time.now(), message })),
    }));
    const check = async () => {
      for (const { checks } of watched) await checks.check?.();
    };
    const advance = async (ms: number) => {
      for (let left = ms; left > 0; left -= CHECK_EVERY_MS) {
        await world.time.advance(Math.min(left, CHECK_EVERY_MS));
        await check();
        if (options.stopAtFirst && violations.length > 0) return;
      }
    };
    options.arrange?.(world);
    await world.start();
    for (const step of schedule.steps) {
      await advance(step.wait * 1000);
      if (options.stopAtFirst && violations.length > 0) break;
      world.eventTimes.push(world.time.now());
      world.eventKinds.push(step.event.kind);
      await eventKind(step.event).apply(world, step.event);
      await world.time.settle();
      await check();
    }
    if (!options.stopAtFirst || violations.length === 0) {
      await advance(world.faultsLeftMs + (options.tailMs ?? 900_000));
      for (const { checks } of watched) await checks.final?.();
    }
    return { violations, virtualMs: world.time.now() - EPOCH, trace: traceOf(world, violations) };
  } finally {
    await world.close();
  }
}

/** A digest of the run: every call, every log line (without its durations), every violation. */
function traceOf(world: SimWorld, violations: readonly Violation[]): string {
  const hash = createHash('sha256');
  for (const c of world.network.calls) hash.update(`${c.at} ${c.process} ${c.dependency} ${c.method} ${c.path} ${String(c.outcome)}\n`);
  for (const line of world.lines) {
    hash.update(`${JSON.stringify(line, (key, value: unknown) => (key === 'ms' || key === 'durationMs' ? undefined : value))}\n`);
  }
  for (const v of violations) hash.update(`${v.at} ${v.invariant} ${v.message}\n`);
  return hash.digest('hex').slice(0, 16);
}
