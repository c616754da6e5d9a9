/**
 * What least privilege (issue 42) costs, against a throwaway local Keystone (bcrypt cost stated), interleaved in one
 * run (baseline, measured, baseline, measured, … the order swapped every round), medians:
 *
 * - the identity plane's admin work with an admin application credential against the same work with the admin
 *   password: one ControlPlane check (a fresh login and the version; for the credential, the GET of its expiry) and one
 *   order's admin calls (a project, a user, a grant, a check, a password, a revoke, the two deletes), through the
 *   plane's admin port (src/plane/keystone-admin.ts). Keystone validates a token issued from an application credential
 *   more slowly than a password's (docs/notes: 210–280 ms against ~21 ms for a service), so this is the figure to watch;
 * - a mint with a role subset and two access rules against a mint without (the same credential port, one create each).
 *
 *   npx tsx bench/least-privilege.ts [rounds=11] [bcryptRounds=4]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationCredentials, KeystoneSession, Projects, Roles, Users, credentialPort, parseAdminCloud } from '../src/keystone';
import { keystoneAdmins } from '../src/plane/keystone-admin';
import type { AdminConnection } from '../src/plane/ports';
import { startLocalKeystone } from '../src/testbed/keystone';
import { conditions, median, ms, printTable, type Figure } from './report';
import { stopOnSignals } from './stops';

const secret = (): string => randomBytes(32).toString('base64url');

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 11);
  const bcryptRounds = Number(process.argv[3] ?? 4);
  const stops: (() => Promise<void>)[] = [];
  stopOnSignals(stops);
  const keystone = await startLocalKeystone({ dir: mkdtempSync(join(tmpdir(), 'kac-bench-lp-')), bcryptRounds });
  stops.push(keystone.stop);
  try {
    const authUrl = keystone.authUrl;
    const password = `clouds:\n  admin:\n    auth:\n      username: admin\n      password: ${keystone.adminPassword}\n      project_name: admin\n      user_domain_name: Default\n      project_domain_name: Default\n`;
    const adminSession = new KeystoneSession({ authUrl, auth: { method: 'password', user: { name: 'admin', domainName: 'Default' }, password: keystone.adminPassword, project: { name: 'admin', domainName: 'Default' } } });
    const appSecret = secret();
    const appCred = await new ApplicationCredentials(adminSession).create({ name: 'bench-plane-admin', secret: appSecret, expiresAt: new Date(Date.now() + 86_400_000) });
    const application = `clouds:\n  admin:\n    auth_type: v3applicationcredential\n    auth:\n      application_credential_id: ${appCred.id}\n      application_credential_secret: ${appSecret}\n`;
    const connections: Record<'password' | 'application credential', AdminConnection> = {
      password: { authUrl, cloud: parseAdminCloud(password, 'admin') },
      'application credential': { authUrl, cloud: parseAdminCloud(application, 'admin') },
    };
    const admins = keystoneAdmins();
    const member = await new Roles(adminSession).findByName('member');
    const samples: Record<string, { check: number[]; order: number[] }> = { password: { check: [], order: [] }, 'application credential': { check: [], order: [] } };

    /** One ControlPlane check and one order's admin calls, as the plane makes them. */
    async function planePass(kind: keyof typeof connections, round: number): Promise<void> {
      const port = admins.connect(connections[kind]);
      let t0 = performance.now();
      await port.verify();
      samples[kind].check.push(performance.now() - t0);
      t0 = performance.now();
      const domainId = (await port.domainId('Default')) as string;
      const project = await port.createProject({ name: `bench-lp-${kind.length}-${round}`, domainId, description: 'bench', tags: ['bench'] });
      const user = await port.createUser({ name: `bench-lp-${kind.length}-${round}`, domainId, password: secret(), description: 'bench' });
      const grant = { roleId: member?.id as string, userId: user.id, projectId: project.id };
      await port.grantRole(grant);
      await port.hasRole(grant);
      await port.setPassword(user.id, secret());
      await port.revokeRole(grant);
      await port.deleteUser(user.id);
      await port.deleteProject(project.id);
      samples[kind].order.push(performance.now() - t0);
    }

    // A user of its own for the mints: member (implying reader) on a project of its own.
    const project = await new Projects(adminSession).create({ name: 'bench-lp-mints', description: 'bench', tags: ['bench'] });
    const userPassword = secret();
    const user = await new Users(adminSession).create({ name: 'bench-lp-mints', password: userPassword, defaultProjectId: project.id });
    await new Roles(adminSession).grantOnProject({ roleId: member?.id as string, userId: user.id, projectId: project.id });
    const session = new KeystoneSession({ authUrl, auth: { method: 'password', user: { id: user.id }, password: userPassword, project: { id: project.id } } });
    const port = credentialPort(session, 'bench-lp-1234abcd-applicationcredential');
    const mints = { plain: [] as number[], restricted: [] as number[] };
    const rules = [
      { service: 'object-store', method: 'GET', path: '/v1/AUTH_*/backups/**' },
      { service: 'object-store', method: 'PUT', path: '/v1/AUTH_*/backups/**' },
    ];
    let n = 0;
    async function mint(kind: keyof typeof mints): Promise<void> {
      const name = `bench-lp-1234abcd-applicationcredential-credential-v${++n}`;
      const t0 = performance.now();
      const created = await port.create({ name, secret: secret(), mark: { subset: kind === 'restricted' }, ...(kind === 'restricted' ? { roles: ['reader'], accessRules: rules } : {}) });
      mints[kind].push(performance.now() - t0);
      await port.delete(created.id);
    }

    await planePass('password', -1); // warm-up: caches, first imports
    await planePass('application credential', -1);
    await mint('plain');
    await mint('restricted');
    for (const s of Object.values(samples)) {
      s.check.length = 0;
      s.order.length = 0;
    }
    mints.plain.length = 0;
    mints.restricted.length = 0;
    for (let round = 0; round < rounds; round++) {
      const order: (keyof typeof connections)[] = round % 2 === 0 ? ['password', 'application credential'] : ['application credential', 'password'];
      for (const kind of order) await planePass(kind, round);
      for (const kind of (round % 2 === 0 ? ['plain', 'restricted'] : ['restricted', 'plain']) as (keyof typeof mints)[]) await mint(kind);
    }
    const figure = (name: string, value: number, baseline: number): Figure => ({ figure: name, value: ms(value), baseline: ms(baseline), ratio: value / baseline });
    const pw = samples.password;
    const ac = samples['application credential'];
    printTable(
      'Least privilege: an admin application credential, and a mint with a role subset and access rules',
      `${conditions(`bcrypt cost ${bcryptRounds}`)}; ${rounds} rounds, medians; baseline: the admin password (the plane), a mint without roles or rules`,
      [
        figure('ControlPlane check (login, version; the credential\'s expiry)', median(ac.check), median(pw.check)),
        figure('one order\'s admin calls (8: project, user, grant, check, password, revoke, 2 deletes)', median(ac.order), median(pw.order)),
        figure('mint with roles [reader] and 2 access rules', median(mints.restricted), median(mints.plain)),
      ],
    );
    await session.close();
    await new Users(adminSession).delete(user.id);
    await new Projects(adminSession).delete(project.id);
    await admins.close();
    await adminSession.close();
  } finally {
    await keystone.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
