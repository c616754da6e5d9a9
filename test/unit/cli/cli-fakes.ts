/**
 * Running `status` and `rotate` in-process over the fake API server of test/unit/kube: a connector that hands out the
 * fake transport, object builders, and a runner that captures stdout, stderr and the error the CLI would print.
 */
import { Command, CommanderError } from 'commander';
import type { Condition } from '../../../src/api';
import type { ClusterConnection, Connector } from '../../../src/cli/status';
import type { Transport } from '../../../src/kube/transport';
import { Kinds } from '../../../src/kube/kinds';
import { FakeApiServer, collectionOf } from '../kube/fake-api-server';

/** The collection path of each kind, as the fake server keys it. */
export const PATHS = {
  ControlPlane: collectionOf(Kinds.ControlPlane),
  KeystoneProject: collectionOf(Kinds.KeystoneProject),
  KeystoneUser: collectionOf(Kinds.KeystoneUser),
  KeystoneRoleAssignment: collectionOf(Kinds.KeystoneRoleAssignment),
  KeystoneApplicationCredential: collectionOf(Kinds.KeystoneApplicationCredential),
} as const;

/** A connector over `transport` whose context namespace is `namespace`. */
export function fakeConnector(transport: Transport, namespace = 'tenant-a'): Connector & { calls: unknown[] } {
  const calls: unknown[] = [];
  const connector = (options: unknown): ClusterConnection => {
    calls.push(options);
    return { transport, source: '--kubeconfig test.kubeconfig', server: transport.server, context: 'test', namespace };
  };
  return Object.assign(connector, { calls });
}

/** A condition as the operator writes it. */
export const condition = (type: string, status: Condition['status'], reason: string, message = `${type} ${reason}`): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-06-01T10:00:00Z',
});

/** A KeystoneApplicationCredential as the API server stores it (defaults applied). */
export function credential(namespace: string, name: string, spec: { credentialGeneration?: number; interval?: string } = {}, status?: object) {
  return {
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name, namespace },
    spec: {
      controlPlaneRef: { name: 'cp', namespace: 'openstack' },
      userRef: { name: 'svc' },
      projectRef: { name: 'svc-project' },
      credentialGeneration: spec.credentialGeneration ?? 1,
      rotation: { interval: spec.interval ?? '720h', gracePeriod: '24h' },
    },
    ...(status ? { status } : {}),
  };
}

/** What a command printed, or the error it failed with. */
export interface Ran {
  readonly out: string;
  readonly err: string;
  /** The message main.ts would print after `keystone-appcred: `, or commander's own error text. */
  readonly error?: string;
}

/** Parses `args` with the command (its io already wired to `sink`) and captures what it wrote. */
export async function runCommand(command: Command, args: readonly string[], sink: { out: string; err: string }): Promise<Ran> {
  command.exitOverride().configureOutput({ writeErr: (t) => (sink.err += t), writeOut: (t) => (sink.out += t) });
  try {
    await command.parseAsync([...args], { from: 'user' });
    return { out: sink.out, err: sink.err };
  } catch (error) {
    if (error instanceof CommanderError) return { out: sink.out, err: sink.err, error: sink.err.trim() };
    // An expected failure is a plain Error (or UnreachableError) with a message; anything else is a bug: let it fail the test.
    if (!(error instanceof Error) || !['Error', 'UnreachableError'].includes(error.name)) throw error;
    return { out: sink.out, err: sink.err, error: error.message };
  }
}

export { FakeApiServer };
