/**
 * The simulation's fixed budget in `npm test` (docs/testing.md, "The simulation"): schedules drawn from a fixed seed,
 * each a few virtual hours of the whole operator under combined faults, every invariant checked after every step. A
 * failure prints the shrunk schedule as a test case to paste into ./cases.test.ts. `KAC_SIM_SEED` and
 * `KAC_SIM_SCHEDULES` change the draw; `npm run soak` runs more.
 */
import { heldInvariants } from './findings';
import { search } from './replay';
import { runSchedule } from './run';
import { scheduleArb } from './generate';
import fc from 'fast-check';

const SEED = Number(process.env.KAC_SIM_SEED ?? 46_0002);
const SCHEDULES = Number(process.env.KAC_SIM_SCHEDULES ?? 80);
/** Past this, no new schedule starts (a loaded machine runs fewer, and says so): under the test's own timeout. */
const WALL_LIMIT_MS = Number(process.env.KAC_SIM_WALL_LIMIT_MS ?? 240_000);

describe('the simulation', () => {
  it(`${SCHEDULES} schedules from seed ${SEED}: every invariant holds after every step`, async () => {
    const result = await search({ seed: SEED, schedules: SCHEDULES, invariants: heldInvariants(), wallLimitMs: WALL_LIMIT_MS });
    const cut = result.interrupted ? `, cut after ${WALL_LIMIT_MS / 1000} s of the ${SCHEDULES}: the machine is loaded` : '';
    process.stderr.write(`[simulation] ${result.schedules} schedules, ${(result.virtualMs / 3_600_000).toFixed(1)} virtual hours in ${(result.wallMs / 1000).toFixed(1)} s wall (seed ${SEED}${cut})\n`);
    if (result.failure) throw new Error(`a schedule broke an invariant; paste this into test/sim/cases.test.ts to replay it:\n\n${result.failure.replay}\n`);
  }, 900_000);

  it('is deterministic: a schedule replayed gives the same run, to every call and log line', async () => {
    const [schedule] = fc.sample(scheduleArb({ maxSteps: 8 }), { seed: SEED, numRuns: 1 });
    const first = await runSchedule(schedule);
    const second = await runSchedule(schedule);
    expect(second.trace).toBe(first.trace);
    expect(second.violations).toEqual(first.violations);
  }, 120_000);
});
