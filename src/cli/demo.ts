/**
 * `npm run demo`: the lifecycle against a real Keystone for a few minutes, as a readable timeline.
 *
 * It starts a throwaway local Keystone (or uses the one `OS_AUTH_URL` and admin `OS_*` variables name), creates a user,
 * a project and a `member` role assignment, and runs the lifecycle with a short schedule (interval 1m, grace 20s by
 * default) through the local face: parked secrets, delivered document and status in a temp directory. It prints what
 * happens (minted, delivered, switched, swept, with generations and expiry times) and checks after every pass that the
 * delivered credential authenticates. It never prints a secret. Ctrl-C, or the end of the run, tears down everything it
 * created.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPrefix, resolveSpec, type KeystoneApplicationCredentialStatus } from '../api';
import { KeystoneSession, Projects, Roles, Users, authenticateApplicationCredential, type PasswordAuth } from '../keystone';
import { reconcile, type ActionEvent, type LifecycleOrder } from '../lifecycle';
import { directoryPorts } from '../local';
import { startLocalKeystone, type LocalKeystone } from '../testbed/keystone';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** How long the lifecycle runs. @default 180 */
  readonly seconds?: number;
  /** @default "1m" */
  readonly interval?: string;
  /** @default "20s" */
  readonly gracePeriod?: string;
  /** Where the timeline goes. @default process.stdout */
  readonly print?: (line: string) => void;
  /** The environment to read `OS_*` admin variables from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

interface Admin {
  readonly authUrl: string;
  readonly session: KeystoneSession;
  readonly keystone?: LocalKeystone;
}

const clock = (d: Date): string => d.toISOString().slice(11, 19);

async function connectAdmin(env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<Admin> {
  if (env.OS_AUTH_URL && env.OS_PASSWORD) {
    const domain = env.OS_USER_DOMAIN_NAME ?? 'Default';
    print(`using the Keystone at ${env.OS_AUTH_URL} as ${env.OS_USERNAME ?? 'admin'}`);
    const session = new KeystoneSession({
      authUrl: env.OS_AUTH_URL,
      auth: {
        method: 'password',
        user: { name: env.OS_USERNAME ?? 'admin', domainName: domain },
        password: env.OS_PASSWORD,
        project: { name: env.OS_PROJECT_NAME ?? 'admin', domainName: env.OS_PROJECT_DOMAIN_NAME ?? domain },
      },
    });
    return { authUrl: env.OS_AUTH_URL, session };
  }
  print('starting a throwaway Keystone on 127.0.0.1 (Debian python3-keystone, SQLite, bcrypt cost 4) …');
  const keystone = await startLocalKeystone({ dir: mkdtempSync(join(tmpdir(), 'kac-demo-keystone-')), install: true, log: print });
  print(`Keystone is up at ${keystone.authUrl} (setup ${(keystone.setupMs / 1000).toFixed(1)} s, start ${(keystone.startMs / 1000).toFixed(1)} s)`);
  const session = new KeystoneSession({
    authUrl: keystone.authUrl,
    auth: {
      method: 'password',
      user: { name: keystone.adminUser, domainName: keystone.domain },
      password: keystone.adminPassword,
      project: { name: keystone.adminProject, domainName: keystone.domain },
    },
  });
  return { authUrl: keystone.authUrl, session, keystone };
}

/** Words for one action of the timeline. */
export function describeEvent(event: ActionEvent): string | undefined {
  const a = event.action;
  if (event.outcome === 'failed') return `${a.type}${'generation' in a ? ` generation ${a.generation}` : ''} failed: ${event.error ?? ''}`;
  switch (a.type) {
    case 'park':
      return undefined;
    case 'mint':
      return `minted generation ${a.generation} in Keystone (${a.why}); ${a.expiresAt ? `expires ${clock(a.expiresAt)}` : 'no expiry'}`;
    case 'deliver':
      return `delivered generation ${a.generation} (${a.why})`;
    case 'backup':
      return `backed up generation ${a.generation}`;
    case 'delete':
      return `swept generation ${a.generation} from Keystone (${a.why})`;
    case 'withdraw':
      return 'removed the delivered document';
    case 'remove-backup':
      return 'removed the backup';
    case 'discard':
    case 'release':
      return undefined;
  }
}

function describeSwitch(before: KeystoneApplicationCredentialStatus, after: KeystoneApplicationCredentialStatus): string | undefined {
  if (after.credentialGeneration === before.credentialGeneration) return undefined;
  const previous = after.previousCredentialGeneration !== undefined ? `; generation ${after.previousCredentialGeneration} stays until ${clock(new Date(after.previousCredentialDeleteAt as string))}` : '';
  const next = after.nextRotation ? `; next rotation ${clock(new Date(after.nextRotation))}` : '';
  return `switched to generation ${after.credentialGeneration}${previous}${next}`;
}

/** Runs the demo; resolves when the run ends and everything it created is gone. */
export async function runDemo(options: DemoOptions = {}): Promise<void> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = Date.now();
  const say = (line: string) => {
    const s = Math.floor((Date.now() - started) / 1000);
    print(`[${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}] ${line}`);
  };
  const admin = await connectAdmin(options.env ?? process.env, say);
  const name = `kac-demo-${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'kac-demo-order-'));
  const projects = new Projects(admin.session);
  const users = new Users(admin.session);
  const created: { userId?: string; projectId?: string } = {};
  let stopping = false;
  let wake: (() => void) | undefined;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    say('interrupted: cleaning up');
    wake?.();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let local: ReturnType<typeof directoryPorts> | undefined;
  let order: LifecycleOrder | undefined;
  try {
    const project = await projects.create({ name, description: 'keystone-appcred demo' });
    created.projectId = project.id;
    const password = randomBytes(24).toString('base64url');
    const user = await users.create({ name, password, defaultProjectId: project.id });
    created.userId = user.id;
    const member = await new Roles(admin.session).findByName('member');
    if (!member) throw new Error('the Keystone has no role "member"');
    await new Roles(admin.session).grantOnProject({ userId: user.id, projectId: project.id, roleId: member.id });
    say(`created project ${name}, user ${name} and the role member on it`);
    const auth: PasswordAuth = { method: 'password', user: { id: user.id }, password, project: { id: project.id } };
    const session = new KeystoneSession({ authUrl: admin.authUrl, auth });
    const prefix = childPrefix({ namespace: 'demo', name });
    local = directoryPorts({ dir, session, prefix });
    const spec = resolveSpec({ rotation: { interval: options.interval ?? '1m', gracePeriod: options.gracePeriod ?? '20s' } });
    say(`ordering a credential: interval ${spec.interval}, grace period ${spec.gracePeriod}; running for ${options.seconds ?? 180} s`);
    const deadline = started + (options.seconds ?? 180) * 1000;
    while (!stopping && Date.now() < deadline) {
      const before = local.status();
      order = { prefix, owner: local.owner, spec, status: before, secretName: `${name}-credentials` };
      const result = await reconcile(order, local.ports, { onAction: (e) => void (describeEvent(e) && say(describeEvent(e) as string)) });
      const switched = describeSwitch(before, result.status);
      if (switched) say(switched);
      const delivered = await local.ports.delivery.read();
      if (delivered) {
        const login = await authenticateApplicationCredential({ authUrl: admin.authUrl, id: delivered.data.application_credential_id, secret: delivered.data.application_credential_secret });
        if (switched) say(`  the delivered generation ${result.status.credentialGeneration} authenticates: token scoped to project ${login.projectId === project.id ? name : login.projectId}, restricted`);
      }
      const wakeAt = Math.min(result.wakeAt?.getTime() ?? deadline, deadline);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(500, wakeAt - Date.now()));
      });
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (local && order) {
      const teardown = await reconcile({ ...order, status: local.status(), deleting: true }, local.ports, { onAction: (e) => void (describeEvent(e) && say(describeEvent(e) as string)) }).catch((e: unknown) => {
        say(`teardown failed: ${e instanceof Error ? e.message : String(e)}`);
        return undefined;
      });
      if (teardown?.released) say('tore down the order: every generation deleted in Keystone');
    }
    if (created.userId) await users.delete(created.userId).catch(() => undefined);
    if (created.projectId) await projects.delete(created.projectId).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    await admin.session.close();
    if (admin.keystone) {
      await admin.keystone.stop();
      say('stopped the throwaway Keystone');
    } else {
      say(`deleted user and project ${name}`);
    }
  }
}
