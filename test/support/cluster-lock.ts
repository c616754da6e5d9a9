/**
 * One API server serves the whole run, and two e2e files install the same cluster-scoped objects (the project's CRDs) and
 * the same operator: `crds.test.ts` applies them, `pulumi-kubernetes.test.ts` deploys and destroys them with Pulumi. Run
 * at once in two Jest workers, one's apply meets the other's field managers, or its CRDs vanish under a `pulumi destroy`.
 * This lock (an atomic `mkdir` in the run's work dir) lets such files take the cluster one at a time.
 *
 * Every file that takes it waits while the others hold it, in its `beforeAll`: that hook's timeout must cover the wait
 * (the other files' whole runs, several minutes on a loaded machine), so those hooks use {@link LOCKED_SETUP_MS}.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long a file waits for the lock before it fails. */
export const LOCK_WAIT_MS = 1_500_000;

/** The timeout of a `beforeAll` that takes the lock: the wait plus the file's own setup. */
export const LOCKED_SETUP_MS = LOCK_WAIT_MS + 600_000;

/** Waits for the cluster, holds it, and returns the function that lets it go. */
export async function lockCluster(holder: string, timeoutMs = LOCK_WAIT_MS): Promise<() => void> {
  // Under the suite's test environment the file already holds a control plane of the pool for its whole run
  // (test/support/kube-pool.ts): nobody else uses it, so there is nothing to wait for.
  if (process.env.KAC_KUBE_POOL_MEMBER !== undefined) return () => undefined;
  const path = join(process.env.KAC_TEST_WORKDIR ?? tmpdir(), 'kube-project-objects.lock');
  const asked = Date.now();
  const deadline = asked + timeoutMs;
  for (;;) {
    try {
      mkdirSync(path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) throw new Error(`${holder}: the cluster lock ${path} was not released within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const taken = Date.now();
  // One line each way, so a run's log shows how long files waited for the one API server and how long each held it
  // (the held times add up to the least wall time the suite can take: docs/testing.md).
  process.stdout.write(`[cluster-lock] ${holder} took the cluster after ${((taken - asked) / 1000).toFixed(1)} s\n`);
  return () => {
    rmSync(path, { recursive: true, force: true });
    process.stdout.write(`[cluster-lock] ${holder} held the cluster ${((Date.now() - taken) / 1000).toFixed(1)} s\n`);
  };
}
