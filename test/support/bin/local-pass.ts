/**
 * One pass of the local face in its own process, for the crash tests: reads its order from stdin (JSON), runs
 * `reconcile`, and when `crashAfter` names an action type, SIGKILLs itself right after that action succeeded — the
 * process dies between "created in Keystone" and anything recorded after it, as a real crash would.
 *
 * Run with `node --import tsx test/support/bin/local-pass.ts`.
 */
import { readFileSync } from 'node:fs';
import { resolveSpec, type RotationSpec } from '../../../src/api';
import { KeystoneSession, type PasswordAuth } from '../../../src/keystone';
import { reconcile } from '../../../src/lifecycle';
import { directoryPorts } from '../../../src/local';

interface PassInput {
  readonly authUrl: string;
  readonly auth: PasswordAuth;
  readonly dir: string;
  readonly prefix: string;
  readonly spec: { credentialGeneration?: number; rotation?: RotationSpec };
  readonly crashAfter?: string;
}

async function main(): Promise<void> {
  const input = JSON.parse(readFileSync(0, 'utf8')) as PassInput;
  const session = new KeystoneSession({ authUrl: input.authUrl, auth: input.auth });
  const local = directoryPorts({ dir: input.dir, session, prefix: input.prefix });
  const result = await reconcile({ prefix: input.prefix, owner: local.owner, spec: resolveSpec(input.spec), status: local.status() }, local.ports, {
    onAction: (event) => {
      process.stdout.write(`${event.action.type} ${'generation' in event.action ? event.action.generation : ''} ${event.outcome}\n`);
      if (event.outcome === 'done' && event.action.type === input.crashAfter) process.kill(process.pid, 'SIGKILL');
    },
  });
  process.stdout.write(`converged generation ${result.status.credentialGeneration}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
