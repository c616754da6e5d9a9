/**
 * The throwaway Keystone's files: its WSGI server script (a listen backlog of 128, one thread per process, one process
 * unless a bench asks for more; SIGUSR1 sets the bcrypt cost of new hashes from the file `bcrypt-rounds`), its
 * `keystone.conf` (SQLite in WAL mode, the dogpile memory cache, Fernet keys, the bcrypt cost), its environment, and
 * the passwords it is bootstrapped with.
 */
import { randomInt } from 'node:crypto';
import { join } from 'node:path';

/** The Python interpreter that can import keystone (a pyenv/venv python first on PATH cannot). */
export const PYTHON = '/usr/bin/python3';

export const SERVER_SCRIPT = `# Written by keystone-appcred's testbed (src/testbed/keystone/). A throwaway Keystone; never use in production.
import json
import os
import signal
import sqlite3
import sys
import threading
import time
import traceback
from wsgiref import simple_server

started = time.monotonic()
plan = json.loads(sys.stdin.readline())
sys.argv = sys.argv[:1]  # oslo.config parses sys.argv

from keystone.cmd import cli  # noqa: E402


def fork_manage(argv):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            cli.main(argv=['keystone-manage'] + argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return pid


def run_stage(stage):
    children = [(fork_manage(argv), argv) for argv in stage]
    for pid, argv in children:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            command = [a for a in argv if not a.startswith('-')][1]
            print('keystone-manage %s failed with exit code %d' % (command, code), flush=True)
            sys.exit(1)


class Server(simple_server.WSGIServer):
    request_queue_size = 128
    allow_reuse_address = True


def watch_parent(parent):
    while True:
        time.sleep(1)
        if os.getppid() != parent:
            os._exit(0)


def set_bcrypt_rounds(signum, frame):
    # A bench sets up at a low cost and measures at the real one: the cost of hashes made from now on (Keystone reads
    # it at each hash; the hashes already made keep theirs).
    try:
        with open(os.path.join(os.path.dirname(plan['config']), 'bcrypt-rounds')) as f:
            rounds = int(f.read().strip())
        from keystone.conf import CONF
        CONF.set_override('password_hash_rounds', rounds, group='identity')
        print('KAC bcrypt rounds %d in %d' % (rounds, os.getpid()), flush=True)
    except Exception:
        traceback.print_exc()


def main():
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    config = ['--config-file', plan['config']]
    owner = ['--keystone-user', plan['user'], '--keystone-group', plan['group']]
    run_stage([
        config + ['db_sync'],
        config + ['fernet_setup'] + owner,  # also creates the [fernet_receipts] keys
        config + ['credential_setup'] + owner,
    ])
    db = sqlite3.connect(plan['database'])
    db.execute('PRAGMA journal_mode=WAL').fetchall()
    # Keystone deletes a deleted user's application credentials in bulk and relies on ON DELETE CASCADE for their role
    # and access-rule rows, which SQLite does not enforce. The rows left behind collide with the next credential that
    # reuses the freed rowid (409 "Duplicate entry found with name ..."). This trigger does what the cascade would.
    db.executescript('''
        CREATE TRIGGER IF NOT EXISTS application_credential_cascade AFTER DELETE ON application_credential
        BEGIN
            DELETE FROM application_credential_role WHERE application_credential_id = OLD.internal_id;
            DELETE FROM application_credential_access_rule WHERE application_credential_id = OLD.internal_id;
        END;
    ''')
    db.close()
    url = plan['url']
    run_stage([config + [
        'bootstrap', '--bootstrap-password', plan['password'],
        '--bootstrap-username', 'admin', '--bootstrap-project-name', 'admin', '--bootstrap-role-name', 'admin',
        '--bootstrap-region-id', 'RegionOne',
        '--bootstrap-admin-url', url, '--bootstrap-internal-url', url, '--bootstrap-public-url', url,
    ]])
    plan['password'] = None
    print('KAC setup finished after %d ms' % ((time.monotonic() - started) * 1000), flush=True)

    os.environ['OS_KEYSTONE_CONFIG_FILES'] = plan['config']
    signal.signal(signal.SIGUSR1, set_bcrypt_rounds)
    # The listening socket first, then the worker processes (each its own application: its own database connections
    # and memory cache, so never correct for tests that delete credentials; a bench of how Keystone shares its
    # workers may ask for them), each accepting from the one socket as uWSGI's processes do.
    server = Server(('127.0.0.1', plan['port']), simple_server.WSGIRequestHandler)
    main_pid = os.getpid()
    for _ in range(plan.get('processes', 1) - 1):
        if os.fork() == 0:
            threading.Thread(target=watch_parent, args=(main_pid,), daemon=True).start()
            break
    from keystone.server.wsgi import initialize_public_application
    server.set_app(initialize_public_application())
    print('KAC keystone listening on %s (process %d)' % (url, os.getpid()), flush=True)
    server.serve_forever()


main()
`;

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ALPHANUMERIC = `${LETTERS}0123456789`;

/**
 * The generator of every password the testbed makes. A password is handed to `keystone-manage bootstrap
 * --bootstrap-password <password>`, whose option parser takes a value starting with `-` for an option and fails (base64url
 * began with `-` about one start in 64). So a password is 32 characters, all alphanumeric, the first a letter: no command
 * line can read it as an option, and it holds about 190 bits (one of 52, then 31 of 62, each from `randomInt`, unbiased).
 * An object, so a test can see that {@link startLocalKeystone} asks this generator for its password.
 */
export const passwords = {
  /** A new random password: a letter, then 31 letters or digits. */
  generate(): string {
    let password = LETTERS[randomInt(LETTERS.length)];
    while (password.length < 32) password += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
    return password;
  },
};

export function keystoneConf(dir: string, bcryptRounds: number): string {
  return `# Written by keystone-appcred's testbed (see src/testbed/keystone/).
[DEFAULT]
debug = false

[database]
connection = sqlite:///${join(dir, 'keystone.db')}

[cache]
enabled = true
backend = dogpile.cache.memory

[token]
provider = fernet

[fernet_tokens]
key_repository = ${join(dir, 'fernet-keys')}

[fernet_receipts]
key_repository = ${join(dir, 'fernet-receipts')}

[credential]
provider = fernet
key_repository = ${join(dir, 'credential-keys')}

[identity]
password_hash_algorithm = bcrypt
password_hash_rounds = ${bcryptRounds}
`;
}

/** A minimal environment for Keystone's Python: no PYTHONPATH/PYTHONHOME/VIRTUAL_ENV, no OS_* leaking in. */
export function pythonEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: dir, LANG: 'C.UTF-8', ...extra };
}


