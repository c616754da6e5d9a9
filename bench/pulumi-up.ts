/**
 * What a routine `pulumi up` costs when nothing is due: a program with N KeystoneApplicationCredentials next to the
 * same program shape with N trivial dynamic resources (a file each), both with the real Pulumi CLI and a local file
 * backend, measured in the same run. Also counts the Keystone calls, through a recording proxy in front of a throwaway
 * local Keystone (bcrypt cost 4).
 *
 *   npm run build && npx tsx bench/pulumi-up.ts [count=20] [runs=3]
 *
 * (tsx, not the compiled file: the test harness it borrows finds its build script beside its source.) The build is
 * needed because the programs load the provider from lib/.
 *
 * The credentials take their connection from the OS_* variables (the default source), pointed at the proxy.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startLocalKeystone } from '../src/testbed/keystone';
import { createServiceUser } from '../test/support/keystone-fixtures';
import { preparePulumi, pulumiEnv } from '../test/support/pulumi';
import { isWrite, startRecordingProxy } from '../test/support/recording-proxy';

const REPO = resolve(__dirname, '..');

const TRIVIAL = `'use strict';
const pulumi = require('@pulumi/pulumi');
const provider = {
  async create(inputs) {
    require('node:fs').writeFileSync(inputs.path, inputs.content);
    return { id: inputs.path, outs: inputs };
  },
  async diff(_id, olds, news) {
    return { changes: olds.content !== news.content || olds.path !== news.path, replaces: olds.path !== news.path ? ['path'] : [] };
  },
  async update(_id, _olds, news) {
    require('node:fs').writeFileSync(news.path, news.content);
    return { outs: news };
  },
  async delete(id) {
    require('node:fs').rmSync(id, { force: true });
  },
};
class TrivialFile extends pulumi.dynamic.Resource {
  constructor(name, args) {
    super(provider, name, args);
  }
}
const count = new pulumi.Config().requireNumber('count');
for (let i = 0; i < count; i++) new TrivialFile('file-' + i, { path: require('node:path').join(__dirname, 'out-' + i + '.txt'), content: 'hello' });
`;

interface Timed {
  readonly ms: number;
  readonly code: number | null;
  readonly out: string;
}

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
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

async function ok(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Timed> {
  const result = await run(cwd, [...args, '--non-interactive'], env);
  if (result.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed:\n${result.out}`);
  return result;
}

function program(parent: string, name: string, files: Record<string, string>): string {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
  symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
  return dir;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 20);
  const runs = Number(process.argv[3] ?? 3);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-pulumi-'));
  const keystone = await startLocalKeystone({ dir: join(work, 'keystone'), bcryptRounds: 4 });
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
    const user = await createServiceUser('bench-pulumi');
    const proxy = await startRecordingProxy(keystone.authUrl);
    const osEnv = { OS_AUTH_URL: proxy.url, OS_USER_ID: user.userId, OS_PASSWORD: user.password, OS_PROJECT_ID: user.projectId };

    const appcred = join(work, 'appcred');
    cpSync(join(REPO, 'test', 'e2e', 'fixtures', 'pulumi-appcred'), appcred, { recursive: true });
    rmSync(join(appcred, 'node_modules'), { recursive: true, force: true });
    program(work, 'appcred', {});
    const trivial = program(work, 'trivial', {
      'Pulumi.yaml': 'name: kac-bench-trivial\nruntime: nodejs\nmain: index.js\n',
      'package.json': '{ "name": "kac-bench-trivial", "private": true }\n',
      'index.js': TRIVIAL,
    });
    for (const dir of [appcred, trivial]) {
      await ok(dir, ['stack', 'init', 'bench']);
      await ok(dir, ['config', 'set', 'count', String(count)]);
    }

    const firstMark = proxy.calls.length;
    const firstAppcred = await ok(appcred, ['up', '--yes', '--skip-preview'], osEnv);
    const firstCalls = proxy.since(firstMark);
    const firstTrivial = await ok(trivial, ['up', '--yes', '--skip-preview']);

    const appcredMs: number[] = [];
    const trivialMs: number[] = [];
    const idleCalls: number[] = [];
    for (let i = 0; i < runs; i++) {
      const mark = proxy.calls.length;
      const a = await ok(appcred, ['up', '--yes', '--skip-preview'], osEnv);
      idleCalls.push(proxy.since(mark).length);
      if (!/unchanged/.test(a.out) || /updated|created/.test(a.out)) throw new Error(`the not-due up changed something:\n${a.out}`);
      appcredMs.push(a.ms);
      trivialMs.push((await ok(trivial, ['up', '--yes', '--skip-preview'])).ms);
    }

    const lines = [
      `pulumi up, ${count} resources, nothing due (real Pulumi CLI ${process.env.KAC_PULUMI_VERSION ?? ''}, file backend, Node ${process.version})`,
      `  KeystoneApplicationCredential x${count}: ${appcredMs.map((ms) => ms.toFixed(0)).join(', ')} ms (median ${median(appcredMs).toFixed(0)})`,
      `  trivial dynamic resource x${count}:      ${trivialMs.map((ms) => ms.toFixed(0)).join(', ')} ms (median ${median(trivialMs).toFixed(0)})`,
      `  ratio (median): ${(median(appcredMs) / median(trivialMs)).toFixed(2)}; first run only: ${(appcredMs[0] / trivialMs[0]).toFixed(2)}`,
      `  Keystone calls during the not-due ups: ${idleCalls.join(', ')}`,
      `first pulumi up (creates): credentials ${firstAppcred.ms.toFixed(0)} ms, trivial ${firstTrivial.ms.toFixed(0)} ms`,
      `  Keystone calls: ${firstCalls.length} (${firstCalls.filter(isWrite).length} writes: ${summarize(firstCalls.filter(isWrite))}; logins ${firstCalls.filter((c) => c.path.startsWith('/v3/auth/tokens')).length}; reads ${firstCalls.filter((c) => c.method === 'GET').length})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    await ok(appcred, ['destroy', '--yes', '--skip-preview'], osEnv);
    await ok(trivial, ['destroy', '--yes', '--skip-preview']);
    await proxy.close();
    await user.cleanup();
    await pulumi.stop();
  } finally {
    await keystone.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function summarize(calls: { method: string }[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
  return [...counts].map(([m, n]) => `${n} ${m}`).join(', ');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
