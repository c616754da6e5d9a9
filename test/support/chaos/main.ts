/**
 * `npm run chaos -- --minutes 30 --seed S --interval 2m`: the real-component chaos run (test/reliability/chaos.test.ts)
 * at a length of one's choosing, beyond the short one `npm test` runs. It starts Jest on that file with the run's
 * settings in its environment (the global setup starts the API server, Keystone and OpenBao), prints the schedule, the
 * events as they happen and the report, and leaves the report, the schedule and the timeline in `--report DIR`. Run it
 * through the machine's test slots where there are some (`/work/locks/e2e-run npm run chaos -- …` on this project's
 * machines). Exits as Jest does: 1 when an invariant broke.
 *
 * `npm run chaos -- --check DIR/timeline.json` checks a run's saved timeline again, without the components (the
 * invariants are pure functions of it): what a changed invariant says of a run already made.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { Duration } from '../../../src/api';
import { checkTimeline } from './invariants';
import type { Timeline } from './timeline';

const program = new Command('chaos')
  .description('run the operator, Keystone, OpenBao and the API server under a seeded schedule of kills, outages and tenant edits, the simulation\'s invariants checked at the real components')
  .option('--minutes <n>', 'the run\'s length, from the orders\' first delivery (events, then a quiet tail)', '30')
  .option('--seed <s>', 'the seed the schedule is drawn from (a new one each run by default)', String(Date.now() % 2 ** 31))
  .option('--interval <duration>', 'rotation.interval of the rotating orders (a Go duration, 1m or more); the grace period is half of it', '2m')
  .option('--schedule <file>', 'run this schedule file (a report\'s schedule.json, maybe edited) instead of drawing one')
  .option('--report <dir>', 'where the report, the schedule and the timeline go (default: a new directory under the temp dir)')
  .option('--check <timeline>', 'check a saved timeline.json again (no run)');

program.parse();
const options = program.opts<{ minutes: string; seed: string; interval: string; schedule?: string; report?: string; check?: string }>();
if (options.check) {
  const timeline = JSON.parse(readFileSync(options.check, 'utf8')) as Timeline;
  const violations = checkTimeline(timeline);
  for (const v of violations) process.stdout.write(`+${Math.round((v.at - timeline.started) / 1000)} s ${v.invariant}: ${v.message}\n`);
  process.stdout.write(`chaos: ${violations.length} violations in ${options.check}\n`);
  process.exit(violations.length === 0 ? 0 : 1);
}
const whole = (flag: string, value: string, min: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) program.error(`${flag} (${value}) must be a whole number, ${min} or more`);
  return n;
};
const minutes = whole('--minutes', options.minutes, 3);
const seed = whole('--seed', options.seed, 0);
const interval = (() => {
  try {
    return Duration.parse(options.interval, '--interval');
  } catch (error) {
    return program.error(error instanceof Error ? error.message : String(error));
  }
})();
if (interval.milliseconds < 60_000) program.error(`--interval (${options.interval}) must be 1m or more (rotation.interval's rule)`);
const report = resolve(options.report ?? join(tmpdir(), `kac-chaos-${seed}-${Date.now()}`));
mkdirSync(report, { recursive: true });

const root = resolve(__dirname, '..', '..', '..');
const result = spawnSync(process.execPath, [join(root, 'node_modules/jest/bin/jest.js'), 'test/reliability/chaos.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    KAC_CHAOS_SEED: String(seed),
    KAC_CHAOS_MINUTES: String(minutes),
    KAC_CHAOS_INTERVAL: options.interval,
    KAC_CHAOS_REPORT: report,
    ...(options.schedule ? { KAC_CHAOS_SCHEDULE: resolve(options.schedule) } : {}),
  },
});
process.stdout.write(`chaos: the report, the schedule and the timeline are in ${report}\n`);
process.exitCode = result.status ?? 1;
