/**
 * The `keystone-appcred` provider plugin against the TypeScript dynamic resource, in one run:
 *
 * - start-up: from spawning the plugin (the bundled `pulumi-resource-keystone-appcred`) until it prints its port (the
 *   moment the engine can talk to it), against the same for the dynamic-provider host that serves the dynamic resource
 *   (`@pulumi/pulumi/cmd/dynamic-provider`, what `pulumi-resource-pulumi-nodejs` runs); bare `node` for scale. Goal:
 *   the plugin no slower (≤ 1.0×);
 * - `pulumi up` of a Pulumi YAML program with N `keystone-appcred:ApplicationCredential`s (the plugin) against a
 *   Node.js program with N `KeystoneApplicationCredential`s (the dynamic resource), both minting from nothing and both
 *   with none due; Keystone calls counted through a recording proxy in front of a throwaway Keystone. Goal ≤ 1.0× each.
 *
 *   npx tsx bench/pulumi-plugin.ts [count=10] [rounds=3] [bcryptRounds=4] [startups=15]
 *
 * The Node.js program loads the provider from lib/ (`npm run build` first); the plugin is bundled from the sources as
 * `npm run build` bundles it. Both take their connection from the OS_* variables, pointed at the proxy.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceUser } from '../test/support/keystone-fixtures';
import { homeWithPlugin, testPlugin } from '../test/support/pulumi-plugin';
import { startRecordingProxy, type RecordedCall } from '../test/support/recording-proxy';
import { REPO, benchEnvironment, ok, program } from './pulumi-harness';
import { conditions, median, ms, printTable, type Figure } from './report';

/** Milliseconds from spawning `node args` until it prints a line on stdout (a provider's port); then kills it. */
function untilFirstLine(args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) {
        const elapsed = performance.now() - t0;
        child.kill('SIGKILL');
        done(elapsed);
      }
    });
    child.once('error', fail);
    child.once('exit', (code) => {
      if (!out.includes('\n')) fail(new Error(`node ${args.join(' ')} exited (${String(code)}) before printing anything`));
    });
  });
}

/** A Pulumi YAML program of `count` credentials of the plugin, with the connection from the environment. */
function yamlProgram(count: number): string {
  const resources = Array.from({ length: count }, (_, i) => `  app-${i}:\n    type: keystone-appcred:ApplicationCredential\n    properties:\n      rotation:\n        interval: 720h\n`).join('');
  return `name: kac-bench-yaml\nruntime: yaml\nresources:\n${resources}outputs:\n  first: \${app-0.credentialId}\n`;
}

function summarize(calls: readonly RecordedCall[]): string {
  const logins = calls.filter((c) => c.method === 'POST' && c.path.includes('/auth/tokens')).length;
  const creates = calls.filter((c) => c.method === 'POST' && c.path.endsWith('/application_credentials')).length;
  return `${calls.length} calls: ${logins} logins, ${creates} creates, ${calls.length - logins - creates} other`;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 10);
  const rounds = Number(process.argv[3] ?? 3);
  const bcryptRounds = Number(process.argv[4] ?? 4);
  const startups = Number(process.argv[5] ?? 15);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-plugin-'));
  process.env.KAC_TEST_WORKDIR = work;
  const { keystone, pulumi } = await benchEnvironment(work, bcryptRounds);
  try {
    const plugin = testPlugin();
    const home = await homeWithPlugin(plugin);

    // Start-up, interleaved.
    const dynamicHost = require.resolve('@pulumi/pulumi/cmd/dynamic-provider');
    const start = { plugin: [] as number[], dynamic: [] as number[], node: [] as number[] };
    for (let i = 0; i < 2; i++) await untilFirstLine([plugin, '127.0.0.1:1']); // warm the page cache
    for (let i = 0; i < startups; i++) {
      const steps = [
        async () => start.plugin.push(await untilFirstLine([plugin, '127.0.0.1:1'])),
        async () => start.dynamic.push(await untilFirstLine([dynamicHost, '127.0.0.1:1'])),
        async () => start.node.push(await untilFirstLine(['-e', 'console.log(1)'])),
      ];
      for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();
    }

    const user = await createServiceUser('bench-plugin');
    const proxy = await startRecordingProxy(keystone.authUrl);
    const osEnv = { OS_AUTH_URL: proxy.url, OS_USER_ID: user.userId, OS_PASSWORD: user.password, OS_PROJECT_ID: user.projectId, PULUMI_HOME: home };

    const yaml = join(work, 'yaml');
    mkdirSync(yaml);
    writeFileSync(join(yaml, 'Pulumi.yaml'), yamlProgram(count));
    const dynamic = join(work, 'dynamic');
    cpSync(join(REPO, 'test', 'e2e', 'fixtures', 'pulumi-appcred'), dynamic, { recursive: true });
    program(work, 'dynamic', {});
    for (const dir of [yaml, dynamic]) await ok(dir, ['stack', 'init', 'bench'], osEnv);
    await ok(dynamic, ['config', 'set', 'count', String(count)], osEnv);
    // One round untimed: the first runs of the CLI, the plugins and Keystone warm caches.
    for (const dir of [yaml, dynamic]) {
      await ok(dir, ['up', '--yes', '--skip-preview'], osEnv);
      await ok(dir, ['destroy', '--yes', '--skip-preview'], osEnv);
    }

    const mint = { yaml: [] as number[], dynamic: [] as number[], calls: { yaml: [] as RecordedCall[], dynamic: [] as RecordedCall[] } };
    const idle = { yaml: [] as number[], dynamic: [] as number[], calls: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['yaml', 'dynamic'] as const) : (['dynamic', 'yaml'] as const);
      for (const face of order) {
        const dir = face === 'yaml' ? yaml : dynamic;
        const mark = proxy.calls.length;
        mint[face].push((await ok(dir, ['up', '--yes', '--skip-preview'], osEnv)).ms);
        mint.calls[face] = proxy.since(mark);
      }
      for (const face of order) {
        const dir = face === 'yaml' ? yaml : dynamic;
        const mark = proxy.calls.length;
        const result = await ok(dir, ['up', '--yes', '--skip-preview'], osEnv);
        if (/updated|created/.test(result.out)) throw new Error(`the not-due up of ${face} changed something:\n${result.out}`);
        idle[face].push(result.ms);
        idle.calls.push(proxy.since(mark).length);
      }
      for (const dir of [yaml, dynamic]) await ok(dir, ['destroy', '--yes', '--skip-preview'], osEnv);
    }

    const startRatio = median(start.plugin) / median(start.dynamic);
    const mintRatio = median(mint.yaml) / median(mint.dynamic);
    const idleRatio = median(idle.yaml) / median(idle.dynamic);
    const figures: Figure[] = [
      { figure: 'plugin start-up (spawn to port)', value: ms(median(start.plugin)), baseline: `${ms(median(start.dynamic))} (dynamic-provider host)`, ratio: startRatio, goal: '≤ 1.0×', met: startRatio <= 1 },
      { figure: 'bare node start (spawn to first line), for scale', value: ms(median(start.node)) },
      { figure: `YAML up minting ${count} (plugin)`, value: ms(median(mint.yaml)), baseline: `${ms(median(mint.dynamic))} (TypeScript dynamic resource, same count)`, ratio: mintRatio, goal: '≤ 1.0×', met: mintRatio <= 1 },
      { figure: 'Keystone calls of those ups', value: `plugin ${summarize(mint.calls.yaml)}; dynamic ${summarize(mint.calls.dynamic)}` },
      { figure: `YAML up with none of ${count} due (plugin)`, value: ms(median(idle.yaml)), baseline: `${ms(median(idle.dynamic))} (TypeScript dynamic resource)`, ratio: idleRatio, goal: '≤ 1.0×', met: idleRatio <= 1 },
      { figure: 'Keystone calls of the ups with none due', value: idle.calls.join(', '), goal: '0', met: idle.calls.every((n) => n === 0) },
    ];
    printTable(
      `the provider plugin against the dynamic resource, ${count} credentials`,
      `${conditions(`bcrypt cost ${bcryptRounds}`)}; Pulumi CLI ${process.env.KAC_PULUMI_VERSION ?? ''} with a file backend; start-up median of ${startups}, ups median of ${rounds} interleaved rounds`,
      figures,
    );
    await proxy.close();
    await user.cleanup();
    await pulumi.stop();
  } finally {
    await keystone.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
