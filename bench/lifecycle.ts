/**
 * One credential, create and rotate: the lifecycle's pass against a bare script making only the Keystone calls a pass
 * cannot avoid, against a throwaway local Keystone (bcrypt cost stated), interleaved in one run (bare, engine, bare,
 * engine, …), medians.
 *
 * Goal figures (issue 13): a pass in a fresh process, i.e. with its own login, against a bare script making one
 * authentication and one create (`POST /v3/auth/tokens`, `POST …/application_credentials` with `fetch`):
 * - create: the first pass (park, list, mint, deliver, record);
 * - rotate: the pass at the due time (park, list, mint the successor, deliver, record the switch).
 *
 * With a session already logged in, as the operator's passes run (their user's token is kept across passes): rotate
 * against one bare create (goal ≤ 1.15×: the physical floor is the create's one bcrypt), and for information create
 * against one bare create and the sweep (the pass after the grace period: list, delete, discard, record) against one
 * bare DELETE.
 *
 * A pass in a fresh process lists the user's credentials once (its observation); that list is what the bare script does
 * not make. Two more rows compare those passes with a bare login + list + create, to show what the engine adds besides
 * that list. Passes on the kept session are served the session's known credentials (src/keystone/known-credentials.ts:
 * the first pass's list with the process's own creates and deletes applied), so they make no list.
 *
 *   npx tsx bench/lifecycle.ts [iterations=15] [bcryptRounds=4]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPrefix, resolveSpec } from '../src/api';
import { KeystoneSession, Projects, Roles, Users, type PasswordAuth } from '../src/keystone';
import { reconcile } from '../src/lifecycle';
import { directoryPorts } from '../src/local';
import { startLocalKeystone } from '../src/testbed/keystone';
import { conditions, median, ms, printTable, type Figure } from './report';

/** The goal of the create and rotate passes against the bare calls they cannot avoid. */
const GOAL = 1.15;

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 15);
  const bcryptRounds = Number(process.argv[3] ?? 4);
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-'));
  const keystone = await startLocalKeystone({ dir: join(work, 'keystone'), bcryptRounds });
  try {
    const admin = new KeystoneSession({
      authUrl: keystone.authUrl,
      auth: { method: 'password', user: { name: 'admin', domainName: 'Default' }, password: keystone.adminPassword, project: { name: 'admin', domainName: 'Default' } },
    });
    const name = `bench-${randomBytes(3).toString('hex')}`;
    const project = await new Projects(admin).create({ name });
    const password = randomBytes(18).toString('base64url');
    const user = await new Users(admin).create({ name, password, defaultProjectId: project.id });
    const member = await new Roles(admin).findByName('member');
    await new Roles(admin).grantOnProject({ userId: user.id, projectId: project.id, roleId: member?.id ?? '' });
    const auth: PasswordAuth = { method: 'password', user: { id: user.id }, password, project: { id: project.id } };
    const warm = new KeystoneSession({ authUrl: keystone.authUrl, auth });
    const { token } = await warm.token();
    const base = `${keystone.authUrl}/users/${user.id}/application_credentials`;

    /** The bare script: optionally one login (and one list), then one create; returns the new credential's id. */
    const bareCreate = async (tag: string, login: boolean, list = false): Promise<string> => {
      let subject = token;
      if (login) {
        const res = await fetch(`${keystone.authUrl}/auth/tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { id: user.id, password } } }, scope: { project: { id: project.id } } } }),
        });
        await res.text();
        subject = res.headers.get('x-subject-token') ?? '';
      }
      if (list) await (await fetch(base, { headers: { 'x-auth-token': subject } })).text();
      const response = await fetch(base, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': subject },
        body: JSON.stringify({ application_credential: { name: `bare-${tag}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }),
      });
      const { application_credential: created } = (await response.json()) as { application_credential: { id: string } };
      return created.id;
    };
    const bareDelete = async (id: string) => (await fetch(`${base}/${id}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).text();
    const timed = async <T>(sample: number[], action: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const result = await action();
      sample.push(performance.now() - t0);
      return result;
    };

    const s = { bareListed: [] as number[], bareCold: [] as number[], createCold: [] as number[], rotateCold: [] as number[], bareWarm: [] as number[], createWarm: [] as number[], rotateWarm: [] as number[], bareDelete: [] as number[], sweep: [] as number[] };
    const spec = resolveSpec({ rotation: { interval: '1h', gracePeriod: '10m' } });
    // One round untimed first: Keystone's and Node's first calls warm caches and connections.
    for (let i = -1; i < iterations; i++) {
      const keep = i >= 0;
      const sample = (xs: number[]) => (keep ? xs : []);
      for (const cold of [true, false]) {
        const session = cold ? () => new KeystoneSession({ authUrl: keystone.authUrl, auth }) : () => warm;
        const dir = mkdtempSync(join(work, 'order-'));
        const prefix = childPrefix({ namespace: 'bench', name: `order-${i}-${cold ? 'c' : 'w'}` });
        const pass = async (now: Date, deleting = false) => {
          const s1 = session();
          const local = directoryPorts({ dir, session: s1, prefix });
          try {
            return await reconcile({ prefix, owner: local.owner, spec, status: local.status(), ...(deleting ? { deleting } : {}) }, local.ports, { clock: () => now });
          } finally {
            if (cold) await s1.close();
          }
        };
        const bareSample = cold ? s.bareCold : s.bareWarm;
        const ids = [await timed(sample(bareSample), () => bareCreate(`${i}-${cold}-a`, cold))];
        const first = await timed(sample(cold ? s.createCold : s.createWarm), () => pass(new Date()));
        ids.push(await timed(sample(bareSample), () => bareCreate(`${i}-${cold}-b`, cold)));
        const rotated = await timed(sample(cold ? s.rotateCold : s.rotateWarm), () => pass(new Date(first.status.nextRotation as string)));
        // What a pass's Keystone calls cost by themselves: login, the observation's list, create.
        if (cold) ids.push(await timed(sample(s.bareListed), () => bareCreate(`${i}-${cold}-c`, true, true)));
        if (!cold) {
          await timed(sample(s.bareDelete), () => bareDelete(ids.pop() as string));
          await timed(sample(s.sweep), () => pass(new Date(new Date(rotated.status.previousCredentialDeleteAt as string).getTime() + 1000)));
        }
        for (const id of ids) await bareDelete(id);
        await pass(new Date(), true);
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const ratio = (a: number[], b: number[]) => median(a) / median(b);
    const figures: Figure[] = [
      { figure: 'create pass, own login', value: ms(median(s.createCold)), baseline: `${ms(median(s.bareCold))} (login + create)`, ratio: ratio(s.createCold, s.bareCold), goal: `≤ ${GOAL}×`, met: ratio(s.createCold, s.bareCold) <= GOAL },
      { figure: 'rotate pass, own login', value: ms(median(s.rotateCold)), baseline: `${ms(median(s.bareCold))} (login + create)`, ratio: ratio(s.rotateCold, s.bareCold), goal: `≤ ${GOAL}×`, met: ratio(s.rotateCold, s.bareCold) <= GOAL },
      { figure: 'create pass, own login, against the same Keystone calls', value: ms(median(s.createCold)), baseline: `${ms(median(s.bareListed))} (login + list + create)`, ratio: ratio(s.createCold, s.bareListed) },
      { figure: 'rotate pass, own login, against the same Keystone calls', value: ms(median(s.rotateCold)), baseline: `${ms(median(s.bareListed))} (login + list + create)`, ratio: ratio(s.rotateCold, s.bareListed) },
      { figure: 'create pass, session logged in', value: ms(median(s.createWarm)), baseline: `${ms(median(s.bareWarm))} (create)`, ratio: ratio(s.createWarm, s.bareWarm) },
      // The operator's passes keep their user's token (src/keystone/sessions.ts): this is a rotation pass as it runs there.
      { figure: 'rotate pass, token kept (as in the operator)', value: ms(median(s.rotateWarm)), baseline: `${ms(median(s.bareWarm))} (create)`, ratio: ratio(s.rotateWarm, s.bareWarm), goal: `≤ ${GOAL}×`, met: ratio(s.rotateWarm, s.bareWarm) <= GOAL },
      { figure: 'sweep pass, session logged in', value: ms(median(s.sweep)), baseline: `${ms(median(s.bareDelete))} (delete)`, ratio: ratio(s.sweep, s.bareDelete) },
    ];
    printTable('One credential: the lifecycle pass vs the bare Keystone calls', `${conditions(`bcrypt cost ${bcryptRounds}`)}; median of ${iterations} interleaved rounds; Keystone ${keystone.authUrl}`, figures);
    await warm.close();
    await admin.close();
  } finally {
    await keystone.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
