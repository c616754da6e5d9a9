/**
 * The bare script: the Keystone calls the operator makes for new orders, made directly with `fetch` and nothing else,
 * the baseline of the convergence (part 2).
 */
import { randomBytes } from 'node:crypto';
import { KeystoneLimits } from '../../src/keystone/limits';
import type { Env } from './cluster';
import { passwordOf } from './orders';

/**
 * The bare script, as `fetch` calls: per order a create, and a login per order (`login: true`) or once per user
 * (`login: false`, shared by the lanes, as the operator with its tokens kept), and a list of the user's credentials per
 * order (`list: 'order'`), once per user after its login (`'user'`, as the operator with its known credentials) or
 * none; in `parallel` lanes (one per request the operator may have in flight), each taking the next order when its
 * last one is done.
 */
export async function bareRound(
  env: Env,
  users: readonly string[],
  count: number,
  calls: { login: boolean; list: 'order' | 'user' | false },
  parallel = 1,
  rate = 0,
): Promise<{ ms: number; created: { user: string; token: string; id: string }[] }> {
  const passwords = new Map<string, string>();
  for (const u of new Set(users)) passwords.set(u, await passwordOf(u));
  const url = env.keystoneUrl;
  // With a rate: the operator's own limit (src/keystone/limits.ts, no bound in flight: the lanes are that), so both arms
  // of the comparison start their requests by the same rule.
  const limit = rate > 0 ? new KeystoneLimits({ requestsPerSecond: rate, inFlight: 0 }).of(url) : undefined;
  const fetch = (input: string, init?: RequestInit): Promise<Response> => (limit ? limit.schedule(() => globalThis.fetch(input, init)) : globalThis.fetch(input, init));
  const login = async (u: string) => {
    const res = await fetch(`${url}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: `bench-${u}`, domain: { name: 'Default' }, password: passwords.get(u) } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }),
    });
    const body = (await res.json()) as { token: { user: { id: string } } };
    return { token: res.headers.get('x-subject-token') ?? '', userId: body.token.user.id };
  };
  const tokens = new Map<string, Promise<{ token: string; userId: string }>>();
  const created: { user: string; token: string; id: string }[] = [];
  const t0 = performance.now();
  let next = 0;
  const order = async (i: number) => {
    const u = users[i];
    let pending = tokens.get(u);
    const first = !pending;
    if (calls.login || !pending) tokens.set(u, (pending = login(u)));
    const t = await pending;
    const base = `${url}/users/${t.userId}/application_credentials`;
    if (calls.list === 'order' || (calls.list === 'user' && first)) await (await fetch(base, { headers: { 'x-auth-token': t.token } })).text();
    const res = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': t.token },
      body: JSON.stringify({ application_credential: { name: `bare-${randomBytes(6).toString('hex')}`, secret: randomBytes(32).toString('base64url'), unrestricted: false, expires_at: null } }),
    });
    const { application_credential: c } = (await res.json()) as { application_credential: { id: string } };
    created.push({ user: t.userId, token: t.token, id: c.id });
  };
  await Promise.all(
    Array.from({ length: Math.max(1, parallel) }, async () => {
      while (next < count) await order(next++);
    }),
  );
  return { ms: performance.now() - t0, created };
}

export async function bareCleanup(env: Env, created: readonly { user: string; token: string; id: string }[]): Promise<void> {
  for (const c of created) await (await fetch(`${env.keystoneUrl}/users/${c.user}/application_credentials/${c.id}`, { method: 'DELETE', headers: { 'x-auth-token': c.token } })).text();
}
