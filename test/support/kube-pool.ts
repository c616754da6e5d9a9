/**
 * The run's Kubernetes control planes as a pool. Most e2e files install the project's CRDs and run an operator, which
 * watches the whole cluster, so two of them must never share an API server; with one API server they ran one after the
 * other, and the suite's wall time was the sum of those files (docs/testing.md, "The cluster pool"). A full run starts
 * one control plane per Jest worker instead (etcd, kube-apiserver, kube-controller-manager each: test/support/kube.ts),
 * and every file that declares `@needs kube` holds one member of the pool for its whole run: the test environment
 * (test/support/environment.ts) takes a free member before the file's first line runs and puts that member's
 * variables (`KAC_KUBECONFIG`, `KAC_KUBE_SERVER`, ...) into the file's `process.env`, and gives it back when the file is
 * done. A file that also needs `target-kube` (the one second API server of the run) takes that first, so two such files
 * never share it either.
 *
 * A member is taken by an atomic `mkdir` of `<workDir>/kube-pool/<n>.lock` (any process of the run may take one); its
 * variables are `<workDir>/kube-pool/<n>.json`, written by the global setup.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How long a file waits for a member before it fails: the other files' whole runs, several minutes on a loaded machine. */
export const POOL_WAIT_MS = 1_500_000;

/** The pool's folder in the run's work dir. */
export function poolDir(workDir: string): string {
  return join(workDir, 'kube-pool');
}

/** Records member `index`'s variables (the global setup, once per started control plane). */
export function writeMember(workDir: string, index: number, env: Readonly<Record<string, string>>): void {
  mkdirSync(poolDir(workDir), { recursive: true });
  writeFileSync(join(poolDir(workDir), `${index}.json`), JSON.stringify(env));
}

/** The members' indexes, in order. */
export function members(workDir: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync(poolDir(workDir));
  } catch {
    return [];
  }
  return entries
    .map((f) => /^(\d+)\.json$/.exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * How many control planes a run starts: `KAC_KUBE_POOL` when set; otherwise one per Jest worker when at least two of
 * the selected files need an API server (the second one costs ~5 s and ~500 MiB), else one.
 */
export function poolSize(kubeFiles: number, maxWorkers: number): number {
  const asked = Number(process.env.KAC_KUBE_POOL);
  if (Number.isInteger(asked) && asked >= 1) return asked;
  return kubeFiles >= 2 ? Math.max(1, Math.min(maxWorkers, kubeFiles)) : 1;
}

/** A member taken by one file: its variables and the function that gives it back. */
export interface TakenMember {
  readonly index: number;
  readonly env: Readonly<Record<string, string>>;
  readonly waitedMs: number;
  release(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the lock at `path` (an atomic mkdir); false when another holds it. */
function tryLock(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

/**
 * Waits for a free member (and first for the target cluster, when `target`), holds it, and returns its variables. A
 * run without a pool (the global setup wrote none) has nothing to take: undefined.
 */
export async function takeMember(workDir: string, holder: string, options: { readonly target?: boolean; readonly timeoutMs?: number } = {}): Promise<TakenMember | undefined> {
  const indexes = members(workDir);
  if (indexes.length === 0) return undefined;
  const dir = poolDir(workDir);
  const asked = Date.now();
  const deadline = asked + (options.timeoutMs ?? POOL_WAIT_MS);
  const targetLock = join(dir, 'target-kube.lock');
  if (options.target) {
    while (!tryLock(targetLock)) {
      if (Date.now() > deadline) throw new Error(`${holder}: the target cluster's lock ${targetLock} was not released in time`);
      await sleep(250);
    }
  }
  for (;;) {
    for (const index of indexes) {
      const lock = join(dir, `${index}.lock`);
      if (!tryLock(lock)) continue;
      const env = JSON.parse(readFileSync(join(dir, `${index}.json`), 'utf8')) as Record<string, string>;
      return {
        index,
        env,
        waitedMs: Date.now() - asked,
        release: () => {
          rmSync(lock, { recursive: true, force: true });
          if (options.target) rmSync(targetLock, { recursive: true, force: true });
        },
      };
    }
    if (Date.now() > deadline) {
      if (options.target) rmSync(targetLock, { recursive: true, force: true });
      throw new Error(`${holder}: no member of the cluster pool ${dir} was released in time`);
    }
    await sleep(250);
  }
}
