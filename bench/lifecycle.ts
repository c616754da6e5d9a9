/**
 * Latency of the lifecycle's three moments against a throwaway local Keystone (bcrypt cost stated), each beside a bare
 * baseline measured in the same run:
 *
 * - create: a first pass (park, mint, deliver, record) vs. one bare `fetch` POST of an application credential;
 * - switch: a rotation pass (park, mint the successor, deliver it, record the switch) vs. the same bare POST;
 * - sweep: the pass after the grace period (delete the superseded credential, record) vs. one bare `fetch` DELETE.
 *
 * Every pass also lists the user's credentials once (the observation), which the bare calls do not.
 *
 *   npm run build && node lib/bench/lifecycle.js [iterations=15] [bcryptRounds=4]
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

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 15);
  const bcryptRounds = Number(process.argv[3] ?? 4);
  const keystone = await startLocalKeystone({ dir: mkdtempSync(join(tmpdir(), 'kac-bench-')), bcryptRounds });
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
    const session = new KeystoneSession({ authUrl: keystone.authUrl, auth });
    const { token } = await session.token();
    const base = `${keystone.authUrl}/users/${user.id}/application_credentials`;
    const bare = { create: [] as number[], delete: [] as number[] };
    const engine = { create: [] as number[], switch: [] as number[], sweep: [] as number[] };
    const spec = resolveSpec({ rotation: { interval: '1h', gracePeriod: '10m' } });
    for (let i = 0; i < iterations; i++) {
      let t = performance.now();
      const response = await fetch(base, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-token': token },
        body: JSON.stringify({ application_credential: { name: `bare-${i}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }),
      });
      const { application_credential: created } = (await response.json()) as { application_credential: { id: string } };
      bare.create.push(performance.now() - t);
      t = performance.now();
      await (await fetch(`${base}/${created.id}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).text();
      bare.delete.push(performance.now() - t);

      const dir = mkdtempSync(join(tmpdir(), 'kac-bench-order-'));
      const prefix = childPrefix({ namespace: 'bench', name: `order-${i}` });
      const local = directoryPorts({ dir, session, prefix });
      const pass = async (now: Date) => reconcile({ prefix, spec, status: local.status() }, local.ports, { clock: () => now });
      const now = new Date();
      t = performance.now();
      const first = await pass(now);
      engine.create.push(performance.now() - t);
      const due = new Date(first.status.nextRotation as string);
      t = performance.now();
      const rotated = await pass(due);
      engine.switch.push(performance.now() - t);
      t = performance.now();
      await pass(new Date(new Date(rotated.status.previousCredentialDeleteAt as string).getTime() + 1000));
      engine.sweep.push(performance.now() - t);
      await reconcile({ prefix, spec, status: local.status(), deleting: true }, local.ports);
      rmSync(dir, { recursive: true, force: true });
    }
    const row = (label: string, mine: number[], baseline: number[]) =>
      `${label.padEnd(8)} engine ${median(mine).toFixed(1).padStart(7)} ms   bare ${median(baseline).toFixed(1).padStart(7)} ms   ratio ${(median(mine) / median(baseline)).toFixed(2)}`;
    process.stdout.write(`lifecycle latency, median of ${iterations}, bcrypt cost ${bcryptRounds}, Keystone ${keystone.authUrl}\n`);
    process.stdout.write(`${row('create', engine.create, bare.create)}\n${row('switch', engine.switch, bare.create)}\n${row('sweep', engine.sweep, bare.delete)}\n`);
    await session.close();
    await admin.close();
  } finally {
    await keystone.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
