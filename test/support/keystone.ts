/**
 * Starter for the real Keystone the integration tests run against (see src/testbed/keystone/ for how it is set up).
 *
 * Variables it exports to the test workers:
 * - `KAC_KEYSTONE_URL` identity endpoint ending in `/v3`
 * - `KAC_KEYSTONE_ADMIN_USER`, `KAC_KEYSTONE_ADMIN_PASSWORD`, `KAC_KEYSTONE_ADMIN_PROJECT` the bootstrap admin
 * - `KAC_KEYSTONE_DOMAIN` domain name of the admin user and project (`Default`)
 * - `KAC_KEYSTONE_BCRYPT_ROUNDS` the bcrypt cost of passwords and application-credential secrets
 *
 * Set `KAC_KEYSTONE_BCRYPT_ROUNDS` before the run to start Keystone at another cost (default 4).
 */
import { startLocalKeystone } from '../../src/testbed/keystone';
import type { Starter } from './starter';

export const startKeystone: Starter = async (workDir) => {
  const rounds = process.env.KAC_KEYSTONE_BCRYPT_ROUNDS ? Number(process.env.KAC_KEYSTONE_BCRYPT_ROUNDS) : 4;
  const keystone = await startLocalKeystone({
    dir: workDir,
    bcryptRounds: rounds,
    install: true,
    log: (line) => process.stderr.write(`[test env] ${line}\n`),
  });
  return {
    env: {
      KAC_KEYSTONE_URL: keystone.authUrl,
      KAC_KEYSTONE_ADMIN_USER: keystone.adminUser,
      KAC_KEYSTONE_ADMIN_PASSWORD: keystone.adminPassword,
      KAC_KEYSTONE_ADMIN_PROJECT: keystone.adminProject,
      KAC_KEYSTONE_DOMAIN: keystone.domain,
      KAC_KEYSTONE_BCRYPT_ROUNDS: String(keystone.bcryptRounds),
    },
    logs: [keystone.logFile],
    stop: keystone.stop,
  };
};
