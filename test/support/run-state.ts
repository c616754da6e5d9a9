/**
 * What the global setup started, kept in the Jest parent process so the teardown and the signal handlers can stop it.
 */
import { rmSync } from 'node:fs';
import type { Started } from './starter';

interface RunState {
  workDir: string;
  started: Started[];
}

const KEY = Symbol.for('keystone-appcred.test-run');
type Holder = { [KEY]?: RunState };

export function registerRun(workDir: string, started: Started[]): void {
  (globalThis as Holder)[KEY] = { workDir, started };
  const onSignal = (signal: NodeJS.Signals): void => {
    void stopAll().finally(() => process.kill(process.pid, signal));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
}

/** Stops every started component (last started first) and removes the run's temp dir unless KAC_KEEP_TEST_DIR is set. */
export async function stopAll(): Promise<void> {
  const state = (globalThis as Holder)[KEY];
  if (!state) return;
  (globalThis as Holder)[KEY] = undefined;
  for (const handle of [...state.started].reverse()) {
    await handle.stop().catch((error: unknown) => process.stderr.write(`[test env] stop failed: ${String(error)}\n`));
  }
  if (!process.env.KAC_KEEP_TEST_DIR) rmSync(state.workDir, { recursive: true, force: true });
}
