// @needs keystone pulumi
/**
 * A rotation window on a Pulumi stack (issue 48), with the real Pulumi CLI (the TypeScript resource in a plain
 * JavaScript program, the local file backend) against the real Keystone through a recording proxy that counts every
 * Keystone call, and time travel by libfaketime on the CLI's environment (the provider process inherits it):
 * - `pulumi preview` refuses a schedule of the wrong shape (the CRD's rule) and a window that cannot open before the
 *   credential's expiry, naming the fields, with 0 Keystone calls;
 * - `up` records `nextRotation` in the latest window that opens before the credential is due (02:00 UTC, not
 *   `lastRotation + interval`); before it `preview --expect-no-changes` holds with 0 Keystone calls; inside it `up`
 *   rotates.
 * An `up` outside the window with a window left before due reports the rotation pending without a diff: unit-tested
 * over the provider's verbs (test/unit/pulumi/provider.test.ts), since the jitter that leads there is drawn per stack.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createServiceUser, type ServiceUser } from '../support/keystone-fixtures';
import { buildProject } from '../support/package';
import { configureStack, runPulumi } from '../support/pulumi';
import { exportedResources, unwrapSecrets } from '../support/pulumi-state';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy';

jest.setTimeout(300_000);

const REPO = resolve(__dirname, '..', '..');
const TYPE = 'pulumi-nodejs:dynamic/keystone-appcred:KeystoneApplicationCredential';
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const H = 3_600_000;
const WINDOW = { schedule: '0 2 * * *', timeZone: 'UTC', duration: '2h' };

/** The environment that moves the provider's clock to `when` (libfaketime: an offset in seconds from now). */
const at = (when: number): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: `+${Math.round((when - Date.now()) / 1000)}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' });

describe('a rotation window on a Pulumi stack', () => {
  let user: ServiceUser;
  let proxy: RecordingProxy;
  let dir: string;
  const stack = 'window';

  const pulumi = (args: string[], env?: NodeJS.ProcessEnv) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length;
    return runPulumi([...args.slice(0, end), '--stack', stack, '--non-interactive', ...args.slice(end)], { cwd: dir, timeoutMs: 240_000, ...(env ? { env } : {}) });
  };
  async function ok(args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
    const r = await pulumi(args, env);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(r.code)}):\n${r.stdout}\n${r.stderr}`.split(user.password).join('***'));
    return r.stdout;
  }
  async function outputs(): Promise<Record<string, unknown>> {
    const resource = exportedResources(await ok(['stack', 'export', '--show-secrets'])).find((r) => r.type === TYPE);
    return unwrapSecrets(resource?.outputs ?? {}) as Record<string, unknown>;
  }
  const setConfig = (key: string, value: unknown) => ok(['config', 'set', key, '--', JSON.stringify(value)]);

  beforeAll(async () => {
    if (!existsSync(FAKETIME_LIB)) throw new Error(`${FAKETIME_LIB} is missing: apt-get install faketime (.ci/run does)`);
    await buildProject();
    user = await createServiceUser('pulumi-window');
    proxy = await startRecordingProxy(user.authUrl);
    dir = mkdtempSync(join(process.env.KAC_TEST_WORKDIR ?? '/tmp', 'pulumi-window-'));
    cpSync(join(__dirname, 'fixtures', 'pulumi-appcred'), dir, { recursive: true });
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(REPO, join(dir, 'node_modules', 'keystone-appcred'), 'dir');
    symlinkSync(join(REPO, 'node_modules', '@pulumi'), join(dir, 'node_modules', '@pulumi'), 'dir');
    await configureStack(ok, { interval: '1h', gracePeriod: '20m', authUrl: proxy.url, userId: user.userId, projectId: user.projectId, password: user.password });
  });

  afterAll(async () => {
    if (dir) await pulumi(['destroy', '--yes', '--skip-preview']).catch(() => undefined);
    await proxy?.close();
    await user?.cleanup();
  });

  it('preview refuses a schedule of the wrong shape and a window that cannot open before the expiry, naming the fields, with 0 Keystone calls', async () => {
    const before = proxy.calls.length;
    await setConfig('window', { ...WINDOW, schedule: '0 0 2 * * *' });
    const shape = await pulumi(['preview']);
    expect(shape.code).not.toBe(0);
    expect(`${shape.stdout}\n${shape.stderr}`).toContain(
      "resource 'app' has a problem: rotation.window.schedule (\"0 0 2 * * *\"): rotation.window.schedule must be a cron schedule of five fields (minute hour day-of-month month day-of-week)",
    );
    await setConfig('window', { ...WINDOW, schedule: '0 2 1 * *' });
    const rare = await pulumi(['preview']);
    expect(rare.code).not.toBe(0);
    expect(`${rare.stdout}\n${rare.stderr}`).toMatch(
      /resource 'app' has a problem: rotation\.window \(\{"schedule":"0 2 1 \* \*","timeZone":"UTC","duration":"2h0m0s"\}\): stays closed for up to \d+h, longer than rotation\.interval minus rotation\.gracePeriod \(40m\)/,
    );
    expect(proxy.calls.length).toBe(before);
  });

  it('up records nextRotation in the latest window before due; before it nothing to do, inside it up rotates', async () => {
    await ok(['config', 'set', 'interval', '72h']);
    await ok(['config', 'set', 'gracePeriod', '1h']);
    await setConfig('window', WINDOW);
    await ok(['up', '--yes', '--skip-preview']);
    const g1 = await outputs();
    const last = Date.parse(g1.lastRotation as string);
    const next = Date.parse(g1.nextRotation as string);
    expect(new Date(next).toISOString().slice(11)).toBe('02:00:00.000Z');
    expect(next).toBeLessThanOrEqual(last + 72 * H);
    expect(next).toBeGreaterThan(last + 48 * H);
    process.stderr.write(`[pulumi-window] lastRotation ${g1.lastRotation as string}, nextRotation ${g1.nextRotation as string} (due ${new Date(last + 72 * H).toISOString()})\n`);

    const before = proxy.calls.length;
    await ok(['preview', '--expect-no-changes'], at(next - H));
    expect(proxy.calls.length).toBe(before);

    await ok(['up', '--yes', '--skip-preview'], at(next + 30 * 60_000));
    const g2 = await outputs();
    expect(g2).toMatchObject({ credentialGeneration: 2, previousCredentialGeneration: 1 });
  });
});
