/**
 * What the Pulumi benches share: a throwaway Keystone and the tests' Pulumi CLI set up in this process's environment
 * (as the test setup does for test files), a `pulumi` command timed from spawn to exit (with the tests' environment,
 * see test/support/pulumi.ts), and a Node.js program directory that loads keystone-appcred and @pulumi/pulumi from this
 * repository.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startLocalKeystone } from '../src/testbed/keystone';
import type { Started } from '../test/support/starter';
import { preparePulumi, pulumiEnv } from '../test/support/pulumi';

export const REPO = resolve(__dirname, '..');

export interface Timed {
  readonly ms: number;
  readonly code: number | null;
  readonly out: string;
}

/** Runs `pulumi ...args` in `cwd`, timed; never throws on a non-zero exit. */
export function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.env.KAC_PULUMI as string, args, { cwd, env: pulumiEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.once('error', fail);
    child.once('close', (code) => done({ ms: performance.now() - t0, code, out }));
  });
}

/** {@link run}, non-interactive; throws with the output on a non-zero exit. */
export async function ok(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Timed> {
  const result = await run(cwd, [...args, '--non-interactive'], env);
  if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed:\n${result.out}`);
  return result;
}

/** A program directory `parent/name` with `files` and node_modules linking keystone-appcred and @pulumi here. */
export function program(parent: string, name: string, files: Record<string, string>): string {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
  symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
  return dir;
}

/**
 * A local Keystone (bcrypt cost `bcryptRounds`) in `work/keystone` and the Pulumi CLI with a file backend in
 * `work/pulumi`, their variables in `process.env` for the test helpers (createServiceUser, runPulumi, …).
 */
export async function benchEnvironment(work: string, bcryptRounds: number): Promise<{ keystone: Awaited<ReturnType<typeof startLocalKeystone>>; pulumi: Started }> {
  const keystone = await startLocalKeystone({ dir: join(work, 'keystone'), bcryptRounds });
  try {
    Object.assign(process.env, {
      KAC_KEYSTONE_URL: keystone.authUrl,
      KAC_KEYSTONE_ADMIN_USER: keystone.adminUser,
      KAC_KEYSTONE_ADMIN_PASSWORD: keystone.adminPassword,
      KAC_KEYSTONE_ADMIN_PROJECT: keystone.adminProject,
      KAC_KEYSTONE_DOMAIN: keystone.domain,
    });
    const pulumi = await preparePulumi(join(work, 'pulumi'));
    Object.assign(process.env, pulumi.env);
    return { keystone, pulumi };
  } catch (error) {
    await keystone.stop();
    throw error;
  }
}
