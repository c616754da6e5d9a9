/**
 * A failing schedule as a test a developer pastes into test/sim/cases.test.ts: the schedule itself (plain JSON, the
 * seed inside it), the invariants it broke as comments, and {@link expectClean}, which runs it and fails with every
 * violation. And the search both the CI test and the soak command run: {@link search} draws schedules from a seed,
 * shrinks the first that breaks an invariant, and says what it covered.
 */
import fc from 'fast-check';
import { scheduleArb } from './generate';
import type { Invariant, RunResult, Schedule, Violation } from './model';
import { runSchedule, type RunOptions } from './run';

/** How long one case may take (wall time): a few virtual hours run in seconds, longer under load. */
export const CASE_TIMEOUT_MS = 120_000;

/** Runs a schedule and fails with every invariant it broke. */
export async function expectClean(schedule: Schedule, options: RunOptions = {}): Promise<RunResult> {
  const result = await runSchedule(schedule, options);
  if (result.violations.length > 0) throw new Error(`the schedule broke ${result.violations.length} invariant(s):\n${describeViolations(result.violations)}`);
  return result;
}

export function describeViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `  ${new Date(v.at).toISOString()} ${v.invariant}: ${v.message}`).join('\n');
}

/** The test case that replays `schedule`. */
export function replayCase(schedule: Schedule, violations: readonly Violation[], name = `seed ${schedule.setup.seed}: ${[...new Set(violations.map((v) => v.invariant))].join(', ')}`): string {
  const steps = schedule.steps.map((s) => `      { wait: ${s.wait}, event: ${JSON.stringify(s.event)} },`);
  return [
    `  // Found by the simulation; it broke:`,
    ...violations.slice(0, 5).map((v) => `  //   ${v.invariant}: ${v.message.replace(/\s+/g, ' ').slice(0, 200)}`),
    `  it(${JSON.stringify(name)}, async () => {`,
    `    await expectClean({`,
    `      setup: ${JSON.stringify(schedule.setup)},`,
    `      steps: [`,
    ...steps.map((s) => `  ${s}`),
    `      ],`,
    `    });`,
    `  }, CASE_TIMEOUT_MS);`,
  ].join('\n');
}

/** What a search covered, and the shrunk schedule that broke an invariant, if one did. */
export interface SearchResult {
  readonly schedules: number;
  readonly virtualMs: number;
  readonly wallMs: number;
  readonly failure?: { readonly schedule: Schedule; readonly violations: readonly Violation[]; readonly replay: string };
  /** The wall-time limit ended the search before every schedule ran. */
  readonly interrupted?: boolean;
}

export interface SearchOptions {
  readonly seed: number;
  readonly schedules: number;
  /**
   * The draw's schedule to start at, counted from 1 (fast-check's replay path): `from: 70, schedules: 1` runs the 70th
   * schedule of the seed alone, and shrinks it if it fails. @default 1
   */
  readonly from?: number;
  /** Steps of one schedule, at most. @default 12 */
  readonly maxSteps?: number;
  /** Shrink a failing schedule (each try is a run). @default true */
  readonly shrink?: boolean;
  /**
   * Run every schedule, a failing one too: each is reported to `onSchedule` and nothing is shrunk; `failure` is the
   * first failing schedule as drawn. @default false (the search ends at the first failure)
   */
  readonly keepGoing?: boolean;
  /** The invariants to hold. @default every one of the registry */
  readonly invariants?: readonly Invariant[];
  /**
   * Stop drawing schedules after this much wall time (a machine too loaded to run the budget in time still finishes,
   * and says how many it ran: `interrupted`). @default none
   */
  readonly wallLimitMs?: number;
  /** Called after each schedule (progress). */
  readonly onSchedule?: (index: number, result: RunResult, schedule: Schedule) => void;
}

/** Runs `schedules` schedules drawn from `seed`; shrinks the first failing one. */
export async function search(options: SearchOptions): Promise<SearchResult> {
  const started = process.hrtime.bigint();
  let schedules = 0;
  let virtualMs = 0;
  let last: { schedule: Schedule; violations: readonly Violation[] } | undefined;
  let shrinking = false;
  // The run under way when the time limit ends the check: it still holds the process's clock until it has closed.
  let running: Promise<unknown> = Promise.resolve();
  const property = fc.asyncProperty(scheduleArb({ maxSteps: options.maxSteps ?? 12 }), async (schedule) => {
    const run = runSchedule(schedule, { stopAtFirst: true, ...(options.invariants ? { invariants: options.invariants } : {}) });
    running = run.catch(() => undefined);
    const result = await run;
    // Until the first failure: the schedules drawn; after it, fast-check's smaller tries, which count for nothing.
    if (!shrinking) {
      schedules++;
      virtualMs += result.virtualMs;
      options.onSchedule?.(schedules + (options.from ?? 1) - 1, result, schedule);
    }
    if (result.violations.length > 0 && options.keepGoing) {
      last ??= { schedule, violations: result.violations };
      return true;
    }
    if (result.violations.length > 0) {
      shrinking = true;
      last = { schedule, violations: result.violations };
    }
    return result.violations.length === 0;
  });
  const details = await fc.check(property, {
    seed: options.seed,
    numRuns: options.schedules,
    endOnFailure: options.shrink === false,
    ...(options.from !== undefined && options.from > 1 ? { path: String(options.from - 1) } : {}),
    ...(options.wallLimitMs !== undefined ? { interruptAfterTimeLimit: options.wallLimitMs, markInterruptAsFailure: false } : {}),
  });
  await running;
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (options.keepGoing && last) return { schedules, virtualMs, wallMs, failure: { ...last, replay: replayCase(last.schedule, last.violations) }, ...(details.interrupted ? { interrupted: true } : {}) };
  if (!details.failed || !details.counterexample) return { schedules, virtualMs, wallMs, ...(details.interrupted ? { interrupted: true } : {}) };
  const schedule = details.counterexample[0];
  // The last failing run fast-check made is the shrunk schedule's own (it ends on its smallest failure).
  const violations = last?.schedule === schedule ? last.violations : (await runSchedule(schedule, { stopAtFirst: true, ...(options.invariants ? { invariants: options.invariants } : {}) })).violations;
  return { schedules, virtualMs, wallMs, failure: { schedule, violations, replay: replayCase(schedule, violations) } };
}
