/**
 * Jest global setup: starts one shared instance of each real component the selected test files need, for the whole run.
 *
 * A test file declares what it needs in a comment line `@needs keystone kube target-kube openbao pulumi` (any subset). The setup reads
 * the test files Jest will run (the `test/` tree filtered by the command line's path patterns), starts the union, and puts
 * the components' variables into `process.env`, which the test workers inherit. `KAC_NEEDS` (comma-separated) overrides
 * the scan. Everything is stopped by the global teardown, on SIGINT/SIGTERM, and on a failed start.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { COMPONENTS, type Component, starterFor } from './components';
import { needsOf } from './needs';
import type { Started } from './starter';
import { startKube } from './kube';
import { poolSize, writeMember } from './kube-pool';
import { registerRun, stopAll } from './run-state';

interface GlobalConfigLike {
  readonly rootDir: string;
  readonly maxWorkers?: number;
  readonly testPathPatterns?: { patterns?: readonly string[] } | readonly string[];
  readonly testPathPattern?: string;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function patternsOf(config: GlobalConfigLike): RegExp[] {
  const raw = config.testPathPatterns;
  const list: readonly string[] = Array.isArray(raw)
    ? raw
    : ((raw as { patterns?: readonly string[] } | undefined)?.patterns ?? (config.testPathPattern ? [config.testPathPattern] : []));
  return list.filter((p) => p.length > 0).map((p) => new RegExp(p, 'i'));
}

/** The components each selected test file declares with `@needs`. */
function selectedNeeds(config: GlobalConfigLike): Set<Component>[] {
  const patterns = patternsOf(config);
  const files = walk(resolve(config.rootDir, 'test')).filter((f) => patterns.length === 0 || patterns.some((p) => p.test(f)));
  return files.map((file) => {
    return new Set(needsOf(readFileSync(file, 'utf8')).filter((w): w is Component => (COMPONENTS as string[]).includes(w)));
  });
}

/** The components the selected test files declare with `@needs`. */
export function neededComponents(config: GlobalConfigLike): Component[] {
  if (process.env.KAC_NEEDS !== undefined) {
    return process.env.KAC_NEEDS.split(',').map((s) => s.trim()).filter((s): s is Component => (COMPONENTS as string[]).includes(s));
  }
  const needed = new Set(selectedNeeds(config).flatMap((n) => [...n]));
  return COMPONENTS.filter((c) => needed.has(c));
}

/**
 * The cluster pool (test/support/kube-pool.ts): `kube`'s control plane is member 0; a run of several files that need an
 * API server starts one more per Jest worker, each with its own work dir, certificates and ports.
 */
async function startPool(config: GlobalConfigLike, workDir: string, first: Started, started: Started[]): Promise<void> {
  writeMember(workDir, 0, first.env);
  const kubeFiles = process.env.KAC_NEEDS !== undefined ? 0 : selectedNeeds(config).filter((n) => n.has('kube')).length;
  const size = poolSize(kubeFiles, config.maxWorkers ?? 1);
  for (let index = 1; index < size; index++) {
    const t0 = Date.now();
    const dir = join(workDir, `kube-${index}`);
    const handle = await startKube(dir);
    started.push(handle);
    writeMember(workDir, index, handle.env);
    process.stderr.write(`[test env] kube pool member ${index} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
  }
}

export default async function globalSetup(config: GlobalConfigLike): Promise<void> {
  const needed = neededComponents(config);
  if (needed.length === 0) return;
  const workDir = mkdtempSync(join(tmpdir(), 'kac-test-'));
  process.env.KAC_TEST_WORKDIR = workDir;
  const started: Started[] = [];
  registerRun(workDir, started);
  try {
    for (const component of needed) {
      const t0 = Date.now();
      const handle = await (await starterFor(component))(join(workDir, component));
      started.push(handle);
      Object.assign(process.env, handle.env);
      if (component === 'kube') await startPool(config, workDir, handle, started);
      process.stderr.write(`[test env] ${component} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
    }
    process.env.KAC_TEST_LOGS = started.flatMap((s) => s.logs).join(':');
  } catch (error) {
    await stopAll();
    throw error;
  }
}
