/**
 * `pulumi up` with the real Pulumi CLI and a local file backend, two programs of the same shape side by side, measured
 * interleaved in one run (medians), with every Keystone call counted through a recording proxy in front of a throwaway
 * local Keystone (bcrypt cost stated):
 *
 * - an up that mints N credentials (N KeystoneApplicationCredentials created) against the same up of N trivial dynamic
 *   resources (a file each) PLUS a bare script making the Keystone calls N credentials need (one login, N creates,
 *   serially, with `fetch`); goal ≤ 1.15×;
 * - an up with none due (nothing changes) against the trivial program's up with nothing to change; goal ≤ 1.1× and 0
 *   Keystone calls.
 *
 *   npm run build && npx tsx bench/pulumi-up.ts [count=20] [rounds=3] [bcryptRounds=4]
 *
 * (tsx, not the compiled file: the test harness it borrows finds its build script beside its source.) The build is
 * needed because the programs load the provider from lib/. The credentials take their connection from the OS_*
 * variables (the default source), pointed at the proxy.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceUser } from '../test/support/keystone-fixtures';
import { startRecordingProxy, type RecordedCall } from '../test/support/recording-proxy';
import { REPO, benchEnvironment, ok, program } from './pulumi-harness';
import { conditions, median, ms, printTable, type Figure } from './report';

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

/** The bare script: one login as the service user, then `count` creates, serially; returns the ids to clean up. */
async function bare(url: string, user: { userId: string; password: string; projectId: string }, count: number): Promise<{ ms: number; token: string; ids: string[] }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { id: user.userId, password: user.password } } }, scope: { project: { id: user.projectId } } } }),
  });
  await res.text();
  const token = res.headers.get('x-subject-token') ?? '';
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const c = await fetch(`${url}/users/${user.userId}/application_credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': token },
      body: JSON.stringify({ application_credential: { name: `bare-${randomBytes(6).toString('hex')}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }),
    });
    ids.push(((await c.json()) as { application_credential: { id: string } }).application_credential.id);
  }
  return { ms: performance.now() - t0, token, ids };
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 20);
  const rounds = Number(process.argv[3] ?? 3);
  const bcryptRounds = Number(process.argv[4] ?? 4);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-pulumi-'));
  const { keystone, pulumi } = await benchEnvironment(work, bcryptRounds);
  try {
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
    // One round untimed: the first runs of the CLI, the plugins and Keystone warm caches.
    await ok(appcred, ['up', '--yes', '--skip-preview'], osEnv);
    await ok(trivial, ['up', '--yes', '--skip-preview']);
    await ok(appcred, ['destroy', '--yes', '--skip-preview'], osEnv);
    await ok(trivial, ['destroy', '--yes', '--skip-preview']);

    const create = { appcred: [] as number[], trivial: [] as number[], bare: [] as number[], calls: [] as RecordedCall[][] };
    for (let r = 0; r < rounds; r++) {
      const steps = [
        async () => {
          const mark = proxy.calls.length;
          create.appcred.push((await ok(appcred, ['up', '--yes', '--skip-preview'], osEnv)).ms);
          create.calls.push(proxy.since(mark));
        },
        async () => create.trivial.push((await ok(trivial, ['up', '--yes', '--skip-preview'])).ms),
        async () => {
          const b = await bare(keystone.authUrl, user, count);
          create.bare.push(b.ms);
          for (const id of b.ids) await (await fetch(`${keystone.authUrl}/users/${user.userId}/application_credentials/${id}`, { method: 'DELETE', headers: { 'x-auth-token': b.token } })).text();
        },
      ];
      for (const step of r % 2 === 0 ? steps : [...steps].reverse()) await step();
      if (r < rounds - 1) {
        await ok(appcred, ['destroy', '--yes', '--skip-preview'], osEnv);
        await ok(trivial, ['destroy', '--yes', '--skip-preview']);
      }
    }

    const idle = { appcred: [] as number[], trivial: [] as number[], calls: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      const steps = [
        async () => {
          const mark = proxy.calls.length;
          const a = await ok(appcred, ['up', '--yes', '--skip-preview'], osEnv);
          idle.calls.push(proxy.since(mark).length);
          if (!/unchanged/.test(a.out) || /updated|created/.test(a.out)) throw new Error(`the not-due up changed something:\n${a.out}`);
          idle.appcred.push(a.ms);
        },
        async () => idle.trivial.push((await ok(trivial, ['up', '--yes', '--skip-preview'])).ms),
      ];
      for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();
    }

    const baseline = create.trivial.map((t, i) => t + create.bare[i]);
    const createRatio = median(create.appcred) / median(baseline);
    const idleRatio = median(idle.appcred) / median(idle.trivial);
    const lastCalls = create.calls[create.calls.length - 1];
    const figures: Figure[] = [
      { figure: `up minting ${count} credentials`, value: ms(median(create.appcred)), baseline: `${ms(median(baseline))} (trivial up ${ms(median(create.trivial))} + bare login and ${count} creates ${ms(median(create.bare))})`, ratio: createRatio, goal: '≤ 1.15×', met: createRatio <= 1.15 },
      { figure: `Keystone calls of that up`, value: summarize(lastCalls) },
      { figure: `up with none of ${count} due`, value: ms(median(idle.appcred)), baseline: `${ms(median(idle.trivial))} (trivial up, nothing to change)`, ratio: idleRatio, goal: '≤ 1.1×', met: idleRatio <= 1.1 },
      { figure: 'Keystone calls of the up with none due', value: idle.calls.join(', '), goal: '0', met: idle.calls.every((n) => n === 0) },
    ];
    printTable(`pulumi up, ${count} resources`, `${conditions(`bcrypt cost ${bcryptRounds}`)}; Pulumi CLI ${process.env.KAC_PULUMI_VERSION ?? ''} with a file backend; median of ${rounds} interleaved rounds`, figures);

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

/** "3 logins, 20 lists, 20 creates" of a slice of the proxy's record. */
function summarize(calls: readonly RecordedCall[]): string {
  const logins = calls.filter((c) => c.method === 'POST' && c.path.includes('/auth/tokens')).length;
  const lists = calls.filter((c) => c.method === 'GET' && /application_credentials(\?|$)/.test(c.path)).length;
  const creates = calls.filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials')).length;
  return `${calls.length} calls: ${logins} logins, ${lists} lists, ${creates} creates, ${calls.length - logins - lists - creates} other`;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
