/**
 * `keystone-appcred status`: every order of the cluster (KeystoneApplicationCredential, KeystoneUser, KeystoneProject,
 * KeystoneRoleAssignment) and every ControlPlane, with its readiness and reason, its generation, its next rotation and,
 * for a KeystoneApplicationCredential, whether a grace period runs; as a kubectl-style table or as JSON or YAML. The
 * orders of every registered target cluster too (the kubeconfig Secrets in the operator's namespace), with a CLUSTER
 * column; `--cluster NAME` shows one of them. collect → columns → render.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { KUBECONFIG_SECRET_SELECTOR } from '../../api';
import { connect } from '../../kube/client-node';
import { clusterOptions, openCluster, type ClusterFlags, type Connector } from '../cluster';
import { STATUS_KINDS, sortRows } from './columns';
import { failureMessage, readRegistrations, readStatus, readTarget } from './collect';
import { OUTPUT_FORMATS, formatMachine, formatTable, type OutputFormat } from './render';

/** Where {@link statusCommand} writes and how it connects; every field defaults to the real thing. */
export interface StatusIo {
  /** Receives the output. @default process.stdout.write */
  readonly write?: (text: string) => void;
  /** Receives notes such as "No orders found". @default process.stderr.write */
  readonly note?: (text: string) => void;
  /** @default connect() of src/kube/client-node.ts */
  readonly connect?: Connector;
  /** The time relative times are computed from. @default new Date() */
  readonly now?: () => Date;
}

interface StatusFlags extends ClusterFlags {
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly output?: OutputFormat;
  readonly cluster?: string;
  readonly operatorNamespace: string;
}

/** The operator's namespace when `--operator-namespace` is not given (the construct's default). */
export const DEFAULT_OPERATOR_NAMESPACE = 'keystone-appcred-system';


function outputFormat(value: string): OutputFormat {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`use json or yaml (or leave -o out for a table)`);
  return value as OutputFormat;
}

/**
 * The `status` subcommand, for `program().addCommand(...)`. Prints the rows it could read; when a kind could not be
 * listed (its CRD is missing, RBAC refuses it) it fails after printing, with one message naming every such kind and
 * what to do. An unreachable API server fails at once; an unreachable target cluster is named after the rows.
 */
export function statusCommand(io: StatusIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  const note = io.note ?? ((text: string): void => void process.stderr.write(text));
  const command = new Command('status')
    .description('show every order and ControlPlane: Ready and reason, generation, next rotation, grace period')
    .addOption(new Option('-n, --namespace <namespace>', "the namespace; default: the context's namespace").conflicts('allNamespaces'))
    .option('-A, --all-namespaces', 'every namespace')
    .option('-o, --output <format>', 'json or yaml instead of the table', outputFormat)
    .option('--cluster <name>', 'only the orders of this registered target cluster (the name of its kubeconfig Secret)')
    .option('--operator-namespace <namespace>', "the operator's namespace, where kubeconfig Secrets register target clusters", DEFAULT_OPERATOR_NAMESPACE);
  return clusterOptions(command).action(async (flags: StatusFlags) => {
    const cluster = openCluster(flags, io.connect);
    const namespace = flags.allNamespaces ? undefined : (flags.namespace ?? cluster.defaultNamespace);
    const management = flags.cluster === undefined ? await readStatus(cluster, namespace) : { rows: [], failures: [] };
    const registered = await readRegistrations(cluster, flags.operatorNamespace);
    const selected = flags.cluster === undefined ? registered.registrations : registered.registrations.filter((r) => r.name === flags.cluster);
    if (flags.cluster !== undefined && selected.length === 0) {
      throw new Error(
        registered.unreadable !== undefined
          ? registered.unreadable.trim()
          : `cluster ${flags.cluster} is not registered: no Secret ${flags.cluster} labelled ${KUBECONFIG_SECRET_SELECTOR} in namespace ${flags.operatorNamespace}`,
      );
    }
    const targets = await Promise.all(selected.map((r) => readTarget(r, namespace, io.connect ?? connect, flags.operatorNamespace)));
    const rows = sortRows([...management.rows, ...targets.flatMap((t) => t.rows)]);
    const failures = [
      ...(management.failures.length > 0 ? [failureMessage(management.failures, cluster.server, namespace)] : []),
      ...targets.flatMap((t) => (t.failure !== undefined ? [t.failure] : [])),
    ];
    if (selected.length === 0 && management.failures.length === STATUS_KINDS.length) throw new Error(failures[0]);
    if (flags.output !== undefined) write(formatMachine(rows, flags.output));
    else if (rows.length > 0) write(formatTable(rows, { allNamespaces: namespace === undefined, clusters: selected.length > 0, now: (io.now ?? (() => new Date()))() }));
    else note(namespace === undefined ? 'No orders found.\n' : `No orders found in namespace ${namespace}.\n`);
    if (registered.unreadable !== undefined) note(registered.unreadable);
    if (failures.length > 0) throw new Error(failures.join('; '));
  });
}
