/**
 * A halt point for the Pulumi crash suite (test/e2e/pulumi-crash.test.ts), inert unless a test sets it: with
 * `KAC_TEST_PULUMI_HALT=<verb>:<point>` and `KAC_TEST_PULUMI_HALT_FILE=<path>` in the environment of `pulumi`, the
 * provider, on reaching that point of a create, update or delete, writes `<path>` and stops there for good (its thread
 * blocked), so the test kills the whole `pulumi` process group with SIGKILL at exactly that boundary, as a CI runner
 * that is killed would. The points: `before` (the run starts, nothing done yet), each action of the lifecycle once it
 * succeeded (`park`, `mint`, `backup`, `deliver`, `delete`, `discard`, `remove-backup`), and `after` (all done, the
 * outputs not yet returned to the engine). Never set outside tests: a halted provider never returns.
 */
import { writeFileSync } from 'node:fs';
import type { Environment } from './check';

/** Stops here for good when the environment names this point (see the module comment); returns at once otherwise. */
export function halt(env: Environment, verb: 'create' | 'update' | 'delete', point: string): void {
  const at = env.KAC_TEST_PULUMI_HALT;
  const file = env.KAC_TEST_PULUMI_HALT_FILE;
  if (!at || !file || at !== `${verb}:${point}`) return;
  writeFileSync(file, `${at}\n`);
  // Blocks the provider's only thread until the test's SIGKILL: no timer, no I/O, nothing more reaches Keystone.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
