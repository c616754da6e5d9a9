/**
 * Debian's `python3-keystone`, which the throwaway Keystone runs: whether it is installed, and installing it (as root,
 * for the demo and the test setup) or saying the command that does.
 */
import { execFile, spawn } from 'node:child_process';

const INSTALL_HINT =
  'apt-get update && apt-get install -y --no-install-recommends python3-keystone';


function keystoneInstalled(): Promise<boolean> {
  return new Promise<boolean>((done) => {
    execFile('dpkg-query', ['-W', '-f=${Status}', 'python3-keystone'], (error, stdout) =>
      done(!error && stdout.trim() === 'install ok installed'),
    );
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
 * Makes sure Debian's python3-keystone is installed. When it is missing and `install` is set, installs it with apt-get
 * (as root; ~2 minutes, +149 MB, nothing runs at install time); otherwise throws with the command to run.
 */
export async function ensureKeystoneInstalled(install: boolean, log: (line: string) => void = () => undefined): Promise<void> {
  if (await keystoneInstalled()) return;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!install || !root) {
    throw new Error(`local keystone: Debian's python3-keystone is not installed; install it with: ${INSTALL_HINT}`);
  }
  log("installing Debian's python3-keystone (once) …");
  await run('apt-get', ['update'], log);
  await run('apt-get', ['install', '-y', '--no-install-recommends', 'python3-keystone'], log);
}

