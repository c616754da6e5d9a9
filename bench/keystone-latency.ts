/**
 * Latency of the Keystone operations the lifecycle performs, against a throwaway local Keystone (src/testbed), serial
 * and warm, with the bcrypt cost stated. Each client operation is paired with the same HTTP call made with a bare
 * `fetch` in the same run, so the ratio shows what the client itself adds.
 *
 *   npm run build && node lib/bench/keystone-latency.js [iterations=30] [bcryptRounds=4]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApplicationCredentials,
  authenticateApplicationCredential,
  issueToken,
  KeystoneSession,
  KeystoneTransport,
  Projects,
  Roles,
  Users,
  type PasswordAuth,
} from '../src/keystone';
import { startLocalKeystone } from '../src/testbed/keystone';

interface Sample {
  readonly name: string;
  readonly ms: number[];
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function timed<T>(sample: Sample, action: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const result = await action();
  sample.ms.push(performance.now() - t0);
  return result;
}

async function bareLogin(authUrl: string, body: unknown): Promise<void> {
  const response = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.text();
  if (response.status !== 201) throw new Error(`bare login: ${response.status}`);
}

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 30);
  const bcryptRounds = Number(process.argv[3] ?? 4);
  const t0 = Date.now();
  const keystone = await startLocalKeystone({ dir: mkdtempSync(join(tmpdir(), 'kac-bench-keystone-')), bcryptRounds });
  const ready = Date.now() - t0;
  try {
    const admin = new KeystoneSession({
      authUrl: keystone.authUrl,
      auth: {
        method: 'password',
        user: { name: 'admin', domainName: 'Default' },
        password: keystone.adminPassword,
        project: { name: 'admin', domainName: 'Default' },
      },
    });
    const name = `bench-${randomBytes(4).toString('hex')}`;
    const password = randomBytes(18).toString('base64url');
    const project = await new Projects(admin).create({ name, tags: ['kac-bench'] });
    const user = await new Users(admin).create({ name, password });
    const roles = new Roles(admin);
    const member = await roles.findByName('member');
    if (!member) throw new Error('role member missing');
    await roles.grantOnProject({ userId: user.id, projectId: project.id, roleId: member.id });
    const auth: PasswordAuth = { method: 'password', user: { id: user.id }, password, project: { id: project.id } };
    const session = new KeystoneSession({ authUrl: keystone.authUrl, auth });
    const credentials = new ApplicationCredentials(session);
    const transport = new KeystoneTransport({ authUrl: keystone.authUrl });

    const samples = {
      passwordAuth: { name: 'password auth (project-scoped)', ms: [] as number[] },
      passwordAuthBare: { name: '  same, bare fetch', ms: [] as number[] },
      create: { name: 'app-cred create', ms: [] as number[] },
      appCredAuth: { name: 'app-cred auth', ms: [] as number[] },
      appCredAuthBare: { name: '  same, bare fetch', ms: [] as number[] },
      validate: { name: 'token validate', ms: [] as number[] },
      delete: { name: 'app-cred delete', ms: [] as number[] },
    };
    await session.token(); // warm
    for (let i = 0; i < iterations + 2; i++) {
      const warmup = i < 2;
      const s = (sample: Sample): Sample => (warmup ? { name: sample.name, ms: [] } : sample);
      await timed(s(samples.passwordAuth), () => issueToken(transport, auth));
      await timed(s(samples.passwordAuthBare), () =>
        bareLogin(keystone.authUrl, {
          auth: {
            identity: { methods: ['password'], password: { user: { id: user.id, password } } },
            scope: { project: { id: project.id } },
          },
        }),
      );
      const secret = randomBytes(32).toString('base64url');
      const created = await timed(s(samples.create), () =>
        credentials.create({ name: `${name}-${i}`, secret, expiresAt: new Date(Date.now() + 3600_000) }),
      );
      const login = await timed(s(samples.appCredAuth), () =>
        authenticateApplicationCredential({ authUrl: keystone.authUrl, id: created.id, secret }),
      );
      await timed(s(samples.appCredAuthBare), () =>
        bareLogin(keystone.authUrl, {
          auth: { identity: { methods: ['application_credential'], application_credential: { id: created.id, secret } } },
        }),
      );
      await timed(s(samples.validate), () => session.validate(login.token));
      await timed(s(samples.delete), () => credentials.delete(created.id));
    }

    const line = (label: string, value: string): string => `${label.padEnd(38)}${value}`;
    console.log(`Keystone 22 (Zed), wsgiref single process, SQLite WAL, memory cache, bcrypt cost ${bcryptRounds}`);
    console.log(line('setup (db_sync, keys, bootstrap)', `${keystone.setupMs} ms`));
    console.log(line('server cold start (to GET /v3 200)', `${keystone.startMs} ms`));
    console.log(line('ready in total', `${ready} ms`));
    console.log(`${iterations} serial iterations, warm:`);
    console.log(line('operation', 'median     p90'));
    for (const sample of Object.values(samples)) {
      console.log(line(sample.name, `${quantile(sample.ms, 0.5).toFixed(1).padStart(6)} ms ${quantile(sample.ms, 0.9).toFixed(1).padStart(6)} ms`));
    }
    const ratio = (a: Sample, b: Sample): string => (quantile(a.ms, 0.5) / quantile(b.ms, 0.5)).toFixed(2);
    console.log(line('client/bare, password auth', `${ratio(samples.passwordAuth, samples.passwordAuthBare)}x`));
    console.log(line('client/bare, app-cred auth', `${ratio(samples.appCredAuth, samples.appCredAuthBare)}x`));
    await new Users(admin).delete(user.id);
    await new Projects(admin).delete(project.id);
  } finally {
    await keystone.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
