/**
 * `npm run soak -- --schedules N --seed S`: the simulation's search (./replay.ts) beyond the fixed budget `npm test`
 * runs: N schedules drawn from seed S, a line per schedule, the first failing one shrunk and printed as a test case for
 * test/sim/cases.test.ts (`--keep-going`: every schedule run, the first failing one printed as drawn; `--from N`: the
 * draw from its Nth schedule on, so `--from N --schedules 1` replays one schedule alone). Exits 1 when a schedule broke
 * an invariant. It holds the invariants the CI search holds (those no unfixed issue-46 finding breaks: ./findings.ts);
 * `--all-invariants` holds every one.
 */
import { Command } from 'commander';
import { heldInvariants } from './findings';
import { search } from './replay';

const program = new Command('soak')
  .description('run the whole operator in the simulation over many seeded schedules, every invariant checked after every step')
  .option('--schedules <n>', 'schedules to run', '200')
  .option('--seed <s>', 'the seed the schedules are drawn from (a new one each run by default)', String(Date.now() % 2 ** 31))
  .option('--from <n>', "the draw's schedule to start at (1 is the first): `--from 70 --schedules 1` replays schedule 70 alone", '1')
  .option('--max-steps <n>', 'events of one schedule, at most', '12')
  .option('--no-shrink', 'print the first failing schedule as it is, without shrinking it')
  .option('--keep-going', 'run every schedule, a failing one too (a line each), and print the first failing one as drawn')
  .option('--all-invariants', "hold every invariant, also those an issue-46 finding whose fix this branch lacks breaks (test/sim/findings.ts)");

program.parse();
const options = program.opts<{ schedules: string; seed: string; from: string; maxSteps: string; shrink: boolean; keepGoing?: boolean; allInvariants?: boolean }>();
const positive = (flag: string, value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) program.error(`${flag} (${value}) must be a whole number, 1 or more`);
  return n;
};
const schedules = positive('--schedules', options.schedules);
const seed = positive('--seed', options.seed);
const maxSteps = positive('--max-steps', options.maxSteps);
const from = positive('--from', options.from);

process.stdout.write(`soak: ${schedules} schedules from seed ${seed}${from > 1 ? `, from its schedule ${from} on` : ''}\n`);
void search({
  seed,
  schedules,
  from,
  maxSteps,
  shrink: options.shrink,
  keepGoing: options.keepGoing === true,
  ...(options.allInvariants ? {} : { invariants: heldInvariants() }),
  onSchedule: (index, result, schedule) => {
    const events = schedule.steps.map((s) => s.event.kind).join(',') || 'no events';
    const verdict = result.violations.length === 0 ? 'ok' : `BROKE ${[...new Set(result.violations.map((v) => v.invariant))].join(', ')}`;
    process.stdout.write(`  #${index} ${(result.virtualMs / 3_600_000).toFixed(2)} h, ${schedule.setup.orders.length} orders, ${events}: ${verdict}\n`);
  },
}).then((result) => {
  process.stdout.write(`soak: ${result.schedules} schedules, ${(result.virtualMs / 3_600_000).toFixed(1)} virtual hours in ${(result.wallMs / 1000).toFixed(1)} s (seed ${seed})\n`);
  if (!result.failure) return;
  process.stdout.write(`\nA schedule broke an invariant; paste this into test/sim/cases.test.ts to replay it:\n\n${result.failure.replay}\n`);
  process.exitCode = 1;
});
