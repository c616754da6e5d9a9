/**
 * Keystone's other user during a mass rotation: a Keystone user of its own with a role on the bench's project (its
 * password hashed at the cost Keystone has when it is made), and the bystander process (./bystander-client.ts) logging
 * in as it in a loop; its logins as samples, to be cut into phases by their start times.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalKeystone } from '../../src/testbed/keystone';

/** One login of the bystander. */
export interface Login {
  /** When it started, epoch ms. */
  readonly at: number;
  /** How long it took, ms. */
  readonly ms: number;
  /** Keystone's HTTP status (0: no answer). */
  readonly status: number;
}

/** The bystander running: its logins so far, and its stop. */
export interface Bystander {
  readonly logins: Login[];
  stop(): Promise<void>;
}

/** A request to Keystone as its admin (the token from `token`), JSON in and out. */
async function asAdmin(keystone: LocalKeystone, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${keystone.authUrl}${path}`, { method, headers: { 'content-type': 'application/json', 'x-auth-token': token }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * Makes the Keystone user `name` with a random password and the `member` role on `project`, through Keystone's API as
 * its admin (the operator is not asked: the bystander is someone else); returns the password.
 */
export async function bystanderUser(keystone: LocalKeystone, name: string, project: string): Promise<string> {
  const login = await fetch(`${keystone.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: keystone.adminPassword } } }, scope: { project: { name: 'admin', domain: { name: 'Default' } } } } }),
  });
  const token = login.headers.get('x-subject-token') ?? '';
  await login.arrayBuffer();
  const password = randomBytes(24).toString('base64url');
  const user = (await asAdmin(keystone, token, 'POST', '/users', { user: { name, password, domain_id: 'default' } })).user as { id: string };
  const projectId = ((await asAdmin(keystone, token, 'GET', `/projects?name=${encodeURIComponent(project)}`)).projects as { id: string }[])[0]?.id;
  const roleId = ((await asAdmin(keystone, token, 'GET', '/roles?name=member')).roles as { id: string }[])[0]?.id;
  if (!projectId || !roleId) throw new Error(`the bystander needs the project ${project} and the member role`);
  await asAdmin(keystone, token, 'PUT', `/projects/${projectId}/users/${user.id}/roles/${roleId}`);
  return password;
}

/** Starts the bystander logging in as `user` (of `project`) to `authUrl`, `pauseMs` between logins. */
export function startBystander(authUrl: string, user: string, password: string, project: string, pauseMs: number): Bystander {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', resolve(__dirname, 'bystander-client.ts')], {
    cwd: resolve(__dirname, '..', '..'),
    env: { PATH: process.env.PATH, KAC_BYSTANDER_URL: authUrl, KAC_BYSTANDER_USER: user, KAC_BYSTANDER_PROJECT: project, KAC_BYSTANDER_PAUSE_MS: String(pauseMs) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin?.end(`${password}\n`);
  const logins: Login[] = [];
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      logins.push(JSON.parse(buffer.slice(0, nl)) as Login);
      buffer = buffer.slice(nl + 1);
    }
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    logins,
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
    },
  };
}

/** Waits until the bystander has made `count` logins in all. */
export async function untilLogins(bystander: Bystander, count: number, timeoutMs = 3_600_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; bystander.logins.length < count; await sleep(200)) {
    if (Date.now() > deadline) throw new Error(`the bystander made ${bystander.logins.length} of ${count} logins in ${timeoutMs} ms`);
  }
}

/** The logins that started in [from, to), answered 201. */
export function loginsBetween(bystander: Bystander, from: number, to: number): Login[] {
  return bystander.logins.filter((l) => l.at >= from && l.at < to && l.status === 201);
}

/** The p-th percentile (0–100) of a non-empty sample, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
