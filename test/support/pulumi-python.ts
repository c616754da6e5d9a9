/**
 * Python for the Automation API tests: the cached venv with the `pulumi` SDK from PyPI (build-test-binaries.sh
 * `pulumi-python`, built on first use), and the generated Python SDK of keystone-appcred installed with pip, as a user
 * installs it, into a directory of the run (never into the shared venv, never writing into the repository).
 */
import { cpSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinary } from './binaries';
import { runOk } from './package';
import { progress } from './proc';

/** The venv's Python and the environment that puts the installed SDK on its path. */
export async function pythonWithSdk(sdkDir: string): Promise<{ python: string; env: NodeJS.ProcessEnv }> {
  const python = resolveBinary('pulumi-python');
  progress(`pulumi-python from ${python.source}: ${python.path}`);
  const parent = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'python-sdk-'));
  const source = join(parent, 'source');
  const target = join(parent, 'site');
  // pip builds in the source tree (egg-info), so it builds a copy.
  cpSync(sdkDir, source, { recursive: true });
  await runOk(python.path, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--no-build-isolation', '--target', target, source], {
    cwd: parent,
    timeoutMs: 300_000,
  });
  return { python: python.path, env: { PYTHONPATH: target, PYTHONDONTWRITEBYTECODE: '1' } };
}
