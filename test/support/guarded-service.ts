/**
 * A small service behind keystonemiddleware's `auth_token`, for the tests that prove access rules where Keystone has
 * them enforced: in the service that validates the token (issue 42). Debian's `python3-keystonemiddleware` (installed
 * beside `python3-keystone`, see src/testbed/keystone/install.ts) wraps a WSGI app that answers 200 with what it was
 * asked and the roles the middleware read from the token; the stdlib wsgiref server serves it on 127.0.0.1.
 *
 * How auth_token enforces access rules (keystonemiddleware 10.1, `BaseAuthProtocol.validate_allowed_request`): a token
 * issued from an application credential that carries access rules is accepted only when the middleware's
 * `service_type` is set and is a type in the token's catalog, and then only for a request whose method and path one
 * rule of that service type allows (`*` one path segment, `**` any); anything else is 401 ("Token authorization
 * failed"). A request that also carries a valid service token (`X-Service-Token`) is taken as part of a chain of
 * services and not checked against the rules. So the service is registered in the test Keystone's catalog under its
 * type (a service and a public endpoint), and validates tokens with the bootstrap admin (the middleware's own
 * credentials, from its config).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PYTHON, pythonEnv } from '../../src/testbed/keystone/config';
import { freePort } from './proc';

const SCRIPT = `# Written by keystone-appcred's tests (test/support/guarded-service.ts): a service behind keystonemiddleware.
import json
import logging
import sys
from wsgiref import simple_server

plan = json.loads(sys.stdin.readline())
sys.argv = sys.argv[:1]
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format='%(asctime)s %(name)s %(levelname)s %(message)s')

from keystonemiddleware import auth_token  # noqa: E402


def things(environ, start_response):
    roles = environ.get('HTTP_X_ROLES', '')
    body = json.dumps({
        'method': environ['REQUEST_METHOD'],
        'path': environ.get('PATH_INFO', ''),
        'roles': sorted(r for r in roles.split(',') if r),
    }).encode()
    start_response('200 OK', [('Content-Type', 'application/json'), ('Content-Length', str(len(body)))])
    return [body]


conf = {
    'log_name': 'guarded-service',
    'www_authenticate_uri': plan['auth_url'],
    'auth_type': 'password',
    'auth_url': plan['auth_url'],
    'username': plan['username'],
    'password': plan['password'],
    'project_name': plan['project'],
    'user_domain_name': plan['domain'],
    'project_domain_name': plan['domain'],
    'service_type': plan['service_type'],
    'delay_auth_decision': 'false',
    'service_token_roles_required': 'true',
}
app = auth_token.AuthProtocol(things, conf)


class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write('access %s\\n' % (fmt % args))


server = simple_server.make_server('127.0.0.1', plan['port'], app, handler_class=Quiet)
print('GUARDED listening', flush=True)
server.serve_forever()
`;

/** Where the service validates tokens, as whom, and under which service type. */
export interface GuardedServiceOptions {
  /** The identity endpoint, ending in `/v3`. */
  readonly authUrl: string;
  /** The middleware's own credentials: a user that may validate tokens (the bootstrap admin in the tests). */
  readonly username: string;
  readonly password: string;
  readonly project: string;
  /** @default "Default" */
  readonly domain?: string;
  /** The service type the middleware enforces access rules for (its `service_type`). */
  readonly serviceType: string;
}

/** A running guarded service. */
export interface GuardedService {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** What the process logged (the middleware's decisions, the access log). */
  log(): string;
  stop(): Promise<void>;
}

/** Starts the service and resolves once it answers (401 without a token). */
export async function startGuardedService(options: GuardedServiceOptions): Promise<GuardedService> {
  const dir = mkdtempSync(join(tmpdir(), 'kac-guarded-'));
  const script = join(dir, 'guarded.py');
  const logFile = join(dir, 'guarded.log');
  writeFileSync(script, SCRIPT);
  writeFileSync(logFile, '');
  const port = await freePort();
  const plan = {
    auth_url: options.authUrl,
    username: options.username,
    password: options.password,
    project: options.project,
    domain: options.domain ?? 'Default',
    service_type: options.serviceType,
    port,
  };
  const child: ChildProcess = spawn(PYTHON, [script], { env: pythonEnv(dir), stdio: ['pipe', 'pipe', 'pipe'] });
  const append = (chunk: Buffer) => writeFileSync(logFile, chunk, { flag: 'a' });
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  child.stdin?.end(`${JSON.stringify(plan)}\n`);
  const url = `http://127.0.0.1:${port}`;
  const log = () => readFileSync(logFile, 'utf8');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      const text = log();
      await stop();
      throw new Error(`the guarded service exited (${child.exitCode}):\n${text.split('\n').slice(-30).join('\n')}`);
    }
    try {
      const response = await fetch(`${url}/v1/things`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 401) return { url, log, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const text = log();
      await stop();
      throw new Error(`the guarded service did not answer within 60 s:\n${text.split('\n').slice(-30).join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
