/**
 * Debian's `python3-keystone`, which the throwaway Keystone runs, and `python3-keystonemiddleware`, whose `auth_token`
 * the tests put in front of a service to prove access rules (issue 42): whether they are installed, and installing them
 * (as root, for the demo and the test setup) or saying the command that does.
 */
import { execFile, spawn } from 'node:child_process';

/** The Debian packages: Keystone itself, and keystonemiddleware (which `python3-keystone` usually brings along). */
export const KEYSTONE_PACKAGES = ['python3-keystone', 'python3-keystonemiddleware'] as const;

const INSTALL_HINT = `apt-get update && apt-get install -y --no-install-recommends ${KEYSTONE_PACKAGES.join(' ')}`;

function installed(pkg: string): Promise<boolean> {
  return new Promise<boolean>((done) => {
    execFile('dpkg-query', ['-W', '-f=${Status}', pkg], (error, stdout) => done(!error && stdout.trim() === 'install ok installed'));
  });
}

function run(command: string, args: readonly string[], log: (line: string) => void): Promise<void> {
  return new Promise<void>((done, fail) => {
    log(`$ ${command} ${args.join(' ')}`);
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`${command} ${args.join(' ')} exited with ${code}`))));
  });
}

/**
 * Makes sure Debian's python3-keystone and python3-keystonemiddleware are installed. When one is missing and `install`
 * is set, installs it with apt-get (as root; ~2 minutes, +149 MB for Keystone, nothing runs at install time); otherwise
 * throws with the command to run.
 */
export async function ensureKeystoneInstalled(install: boolean, log: (line: string) => void = () => undefined): Promise<void> {
  const missing: string[] = [];
  for (const pkg of KEYSTONE_PACKAGES) if (!(await installed(pkg))) missing.push(pkg);
  if (missing.length === 0) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!install || !root) {
    throw new Error(`local keystone: Debian's ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not installed; install with: ${INSTALL_HINT}`);
  }
  log(`installing Debian's ${missing.join(', ')} (once) …`);
  await run('apt-get', ['update'], log);
  await run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], log);
}

