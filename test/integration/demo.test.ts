// @needs keystone
/**
 * `npm run demo`'s timeline against the test Keystone (given as OS_* variables, as a user would), shortened to one
 * rotation and one sweep: it mints, switches, sweeps and tears down, and prints no secret.
 */
import { runDemo } from '../../src/cli/demo';
import { Projects, Users } from '../../src/keystone';
import { adminSession, keystoneTestEnv } from '../support/keystone-fixtures';

it('prints minted, switched and swept with generations and expiry times, never a secret, and cleans up', async () => {
  const env = keystoneTestEnv();
  const lines: string[] = [];
  await runDemo({
    seconds: 72,
    interval: '1m',
    gracePeriod: '5s',
    print: (line) => lines.push(line),
    env: { OS_AUTH_URL: env.authUrl, OS_USERNAME: env.adminUser, OS_PASSWORD: env.adminPassword, OS_PROJECT_NAME: env.adminProject, OS_USER_DOMAIN_NAME: env.domain },
  });
  const text = lines.join('\n');
  expect(text).toMatch(/minted generation 1 in Keystone \(first credential\); expires \d\d:\d\d:\d\d/);
  expect(text).toMatch(/switched to generation 1; next rotation \d\d:\d\d:\d\d/);
  expect(text).toMatch(/minted generation 2 in Keystone \(schedule due\)/);
  expect(text).toMatch(/switched to generation 2; generation 1 stays until \d\d:\d\d:\d\d/);
  expect(text).toMatch(/the delivered generation 2 authenticates/);
  expect(text).toMatch(/swept generation 1 from Keystone \(grace period over\)/);
  expect(text).toMatch(/tore down the order/);
  // Secrets are 43 base64url characters; passwords 32. Neither shape may appear, nor the admin password.
  expect(text).not.toMatch(/[A-Za-z0-9_-]{32,}/);
  expect(text).not.toContain(env.adminPassword);
  // Nothing of the demo is left: its user and project are gone (and with the user, any credential of it).
  const name = /created project (kac-demo-[0-9a-f]+)/.exec(text)?.[1] as string;
  expect(name).toBeDefined();
  const admin = adminSession(env);
  expect(await new Users(admin).findByName(name)).toBeUndefined();
  expect(await new Projects(admin).findByName(name)).toBeUndefined();
}, 150_000);
