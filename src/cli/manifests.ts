/**
 * `keystone-appcred manifests`: the CRDs, the operator and (with `--sample`) a sample set of orders as multi-document
 * YAML on stdout, synthesized from the construct library (`keystone-appcred/cdk8s`), for `kubectl apply -f -` without a
 * cdk8s app of one's own. With `--target-cluster`, what a registered target cluster needs instead: the four order CRDs
 * and the ClusterRole and binding of the identity the operator's kubeconfig uses there (the `TargetCluster` construct).
 * With `--secret-namespaces`, either grants Secrets only in the listed namespaces (issue 34, the namespaced mode).
 *
 * The construct library and its peer dependencies (`cdk8s`, `constructs`) are loaded only when the
 * command runs, so the rest of the command line works without them.
 */
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type * as Library from '../../constructs';
import { DEFAULT_WORKERS } from '../api/operator-env';
import { parseSecretGrants, type SecretGrants } from '../api/secret-access';
import { packageVersion } from './version';

export { packageVersion } from './version';

/** What {@link renderManifests} synthesizes. */
export interface ManifestsOptions {
  /** The operator image repository, without tag or digest. */
  readonly image: string;
  /** The operator image tag. */
  readonly tag: string;
  /** OpenBao's http(s) address. @default "https://openbao.openbao.svc:8200" */
  readonly openBaoAddress?: string;
  /** The OpenBao role of the Kubernetes auth method (ignored with `openBaoTokenSecret`). @default "keystone-appcred-operator" */
  readonly openBaoRole?: string;
  /** Authenticate to OpenBao with a token from this Secret (key `token`) instead of the Kubernetes auth method. @default none */
  readonly openBaoTokenSecret?: string;
  /** The operator's namespace. @default "keystone-appcred-system" */
  readonly namespace?: string;
  /** Workers of every controller (the construct's `workers`). @default the construct's default ({@link DEFAULT_WORKERS}) */
  readonly workers?: number;
  /** Add the sample orders (ControlPlane `openstack/cp` assigning `tenant-a`, and a ServiceOwner `workflow` there). @default false */
  readonly sample?: boolean;
  /** Turn the consumer handoff on: the operator's `consumerHandoff` prop (its workload rules and `KAC_CONSUMER_HANDOFF`). @default false */
  readonly consumerHandoff?: boolean;
  /**
   * Add the operator's observability for prometheus-operator and Grafana's dashboard sidecar: a ServiceMonitor, the
   * alerts as a PrometheusRule, the dashboard as a ConfigMap (the `OperatorMonitor`, `AlertRules` and `Dashboard`
   * constructs), in the operator's namespace. Needs prometheus-operator's CRDs on the cluster. @default false
   */
  readonly monitoring?: boolean;
  /**
   * The namespaced Secret access (the operator's `secretAccess: 'namespaced'`): no cluster-scoped rule on Secrets, a
   * Role in each of these namespaces, a read-only Role for each of these sources (and, with `sample`, for the sample's
   * namespaces too). @default the cluster-wide access
   */
  readonly secretGrants?: SecretGrants;
  /**
   * Operator props beyond the options above, over them (the Helm chart's values: tools/chart), e.g. `{ logLevel, limits }`.
   * @default none
   */
  readonly operator?: Partial<Omit<Library.OperatorProps, 'image' | 'tag'>>;
}

/** What {@link renderTargetClusterManifests} synthesizes. */
export interface TargetClusterManifestsOptions {
  /** The service account the operator's kubeconfig for the target cluster authenticates as, `NAMESPACE/NAME`. @default "keystone-appcred-system/keystone-appcred-operator" */
  readonly serviceAccount?: string;
  /** A user (a client certificate's CN, an OIDC user) to bind instead of a service account. @default none */
  readonly user?: string;
  /** The namespaced Secret access: no cluster-scoped rule on Secrets, a Role in each of these namespaces. @default the cluster-wide access */
  readonly secretNamespaces?: readonly string[];
}

/** The service account bound on a target cluster when neither `--target-service-account` nor `--target-user` is given. */
export const DEFAULT_TARGET_SERVICE_ACCOUNT = 'keystone-appcred-system/keystone-appcred-operator';

/** OpenBao's address when `--openbao-address` is not given. */
export const DEFAULT_OPENBAO_ADDRESS = 'https://openbao.openbao.svc:8200';
/** The OpenBao role when `--openbao-role` is not given. */
export const DEFAULT_OPENBAO_ROLE = 'keystone-appcred-operator';

/** The peer dependencies the construct library needs at run time. */
const PEERS = ['cdk8s', 'constructs'] as const;

/** The option each construct prop comes from, to name it in an error. */
const OPTION_OF: Readonly<Record<string, string>> = {
  image: '--image',
  tag: '--image',
  namespace: '--namespace',
  workers: '--workers',
  'openBao.address': '--openbao-address',
  'openBao.auth.role': '--openbao-role',
  'openBao.auth.secretName': '--openbao-token-secret',
};

/** An `--image` value: the repository, the tag, and the text as given. */
export interface ParsedImage {
  readonly image: string;
  readonly tag: string;
  readonly given: string;
}

/**
 * Splits `IMAGE[:TAG]` into the repository and the tag (default: this package's version). A colon before the last `/`
 * belongs to a registry port (`registry:5000/kac`). Digests are refused: the operator's image is a repository and a tag.
 * Throws an {@link InvalidArgumentError} with the reason (commander prefixes the option and the value).
 */
export function parseImage(value: string): ParsedImage {
  const fail = (why: string): never => {
    throw new InvalidArgumentError(why);
  };
  if (value.includes('@')) fail('digests are not supported; give IMAGE or IMAGE:TAG');
  const slash = value.lastIndexOf('/');
  const colon = value.lastIndexOf(':');
  const image = colon > slash ? value.slice(0, colon) : value;
  const tag = colon > slash ? value.slice(colon + 1) : packageVersion();
  if (image === '') fail('the image repository is empty');
  if (tag === '') fail('the tag after ":" is empty');
  return { image, tag, given: value };
}

function loadLibrary(): typeof Library {
  try {
    // Loaded here, not at the top: the construct library needs the optional peer dependencies.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../../constructs') as typeof Library;
  } catch (error) {
    const missing = PEERS.find((peer) => (error as { code?: unknown }).code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${peer}'`));
    if (missing === undefined) throw error;
    throw new Error(`manifests needs the optional peer dependencies ${PEERS.join(', ')} (${missing} is not installed): npm install ${PEERS.join(' ')}`);
  }
}

/**
 * Rewrites a construct's prop error (`<path>: openBao.address ("x") must be ...`) to name the command-line option and
 * the value given there; any other error is returned as it is.
 */
export function asOptionError(error: unknown, given: Readonly<Record<string, string | undefined>>, optionOf: Readonly<Record<string, string>> = {}): Error {
  const message = error instanceof Error ? error.message : String(error);
  const match = /^\S+: (\S+) \((.*)\) (.*)$/s.exec(message);
  const option = match ? (optionOf[match[1]] ?? OPTION_OF[match[1]]) : undefined;
  if (!match || option === undefined) return error instanceof Error ? error : new Error(message);
  const [, prop, value, rule] = match;
  // The construct's hint about its separate `tag` prop means nothing on the command line.
  const reason = prop === 'image' ? `the repository ${value} must be lower-case letters, digits, ".", "_", "-", "/" and a registry ":port"` : `${prop} ${rule}`;
  return new Error(`${option} (${given[option] !== undefined ? JSON.stringify(given[option]) : value}): ${reason}`);
}

/**
 * The manifests as multi-document YAML: the six CRDs and the cluster identity's admission policy, then the operator,
 * then (with `monitoring`) its ServiceMonitor, PrometheusRule and dashboard ConfigMap, then (with `sample`) the sample
 * namespaces and orders. A refused value throws the construct's error, which names the prop and the value
 * (`operator/Operator: namespace ("Apps") must be a DNS label ...`); a missing peer dependency throws an
 * error that names it and the install command.
 */
export function renderManifests(options: ManifestsOptions): string {
  const lib = loadLibrary();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const cdk8s = require('cdk8s') as typeof import('cdk8s');
  // synthYaml() writes nothing; the outdir is never created.
  const app = new cdk8s.App({ outdir: join(__dirname, 'never-written') });
  const crds = new cdk8s.Chart(app, 'crds');
  new lib.Crds(crds, 'Crds');
  const operatorChart = new cdk8s.Chart(app, 'operator');
  const operator = new lib.Operator(operatorChart, 'Operator', {
    image: options.image,
    tag: options.tag,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    ...(options.consumerHandoff ? { consumerHandoff: true } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.secretGrants
      ? { secretAccess: lib.SecretAccess.NAMESPACED, secretNamespaces: [...options.secretGrants.namespaces], sourceSecrets: [...options.secretGrants.sources] }
      : {}),
    openBao: {
      address: options.openBaoAddress ?? DEFAULT_OPENBAO_ADDRESS,
      auth:
        options.openBaoTokenSecret !== undefined
          ? lib.OpenBaoAuth.token({ secretName: options.openBaoTokenSecret })
          : lib.OpenBaoAuth.kubernetes({ role: options.openBaoRole ?? DEFAULT_OPENBAO_ROLE }),
    },
    ...options.operator,
  });
  if (options.monitoring) {
    const monitoring = new cdk8s.Chart(app, 'monitoring');
    new lib.OperatorMonitor(monitoring, 'OperatorMonitor', { operator });
    new lib.AlertRules(monitoring, 'AlertRules', { operator });
    new lib.Dashboard(monitoring, 'Dashboard', { namespace: operator.namespace });
  }
  if (options.sample) {
    const samples = new cdk8s.Chart(app, 'samples');
    for (const name of ['openstack', 'tenant-a']) new cdk8s.ApiObject(samples, `Namespace-${name}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const controlPlane = new lib.ControlPlane(samples, 'ControlPlane', {
      metadata: { name: 'cp', namespace: 'openstack' },
      keystone: { authURL: 'https://keystone.openstack.svc:5000/v3', caBundleSecretRef: { name: 'keystone-ca' } },
      adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
      namespaceAssignments: [{ namespace: 'tenant-a', allowedRoles: ['member', 'reader'] }],
    });
    new lib.ServiceOwner(samples, 'Workflow', { namespace: 'tenant-a', controlPlaneRef: controlPlane.ref, name: 'workflow', role: 'member' });
  }
  return app.synthYaml();
}

/**
 * What a registered target cluster needs, as multi-document YAML: the CRDs of KeystoneProject, KeystoneUser,
 * KeystoneRoleAssignment and KeystoneApplicationCredential, then the ClusterRole and ClusterRoleBinding of the operator's
 * identity there. A refused value throws the construct's error.
 */
export function renderTargetClusterManifests(options: TargetClusterManifestsOptions = {}): string {
  const lib = loadLibrary();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const cdk8s = require('cdk8s') as typeof import('cdk8s');
  const app = new cdk8s.App({ outdir: join(__dirname, 'never-written') });
  const chart = new cdk8s.Chart(app, 'target-cluster');
  let subject: Library.TargetClusterSubject;
  if (options.user !== undefined) subject = lib.TargetClusterSubject.user(options.user);
  else {
    const given = options.serviceAccount ?? DEFAULT_TARGET_SERVICE_ACCOUNT;
    const slash = given.indexOf('/');
    subject = lib.TargetClusterSubject.serviceAccount(slash < 0 ? given : given.slice(slash + 1), slash < 0 ? '' : given.slice(0, slash));
  }
  new lib.TargetCluster(chart, 'TargetCluster', { subject, ...(options.secretNamespaces ? { secretAccess: lib.SecretAccess.NAMESPACED, secretNamespaces: [...options.secretNamespaces] } : {}) });
  return app.synthYaml();
}

/** Where {@link manifestsCommand} writes. */
export interface ManifestsIo {
  /** Receives the YAML. @default process.stdout.write */
  readonly write?: (text: string) => void;
}

interface CommandOptions {
  readonly image?: ParsedImage;
  readonly openbaoAddress: string;
  readonly openbaoRole: string;
  readonly openbaoTokenSecret?: string;
  readonly namespace: string;
  readonly workers?: string;
  readonly sample?: boolean;
  readonly consumerHandoff?: boolean;
  readonly monitoring?: boolean;
  readonly targetCluster?: boolean;
  readonly targetServiceAccount?: string;
  readonly targetUser?: string;
  readonly secretNamespaces?: SecretGrants;
}

/** Parses `--secret-namespaces` (see {@link parseSecretGrants}); commander prefixes the option and the value. */
function secretNamespacesArg(value: string): SecretGrants {
  try {
    return parseSecretGrants(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The `manifests` subcommand, for `program().addCommand(...)`. A refused value fails the command with an error that
 * names the option and the value as given (`--namespace ("Apps"): namespace must be a DNS label ...`).
 */
export function manifestsCommand(io: ManifestsIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  const command: Command = new Command('manifests')
    .description('print the CRDs, the operator and optionally sample orders as multi-document YAML, for `kubectl apply --server-side -f -`')
    .option('--image <IMAGE[:TAG]>', "the operator's image; the tag defaults to this package's version (required unless --target-cluster)", parseImage)
    .option('--openbao-address <url>', 'the OpenBao address the operator backs credentials up to', DEFAULT_OPENBAO_ADDRESS)
    .option('--openbao-role <role>', 'the OpenBao role of the Kubernetes auth method', DEFAULT_OPENBAO_ROLE)
    .option('--openbao-token-secret <name>', "authenticate to OpenBao with the token in this Secret (key `token`) of the operator's namespace")
    .option('--namespace <name>', "the operator's namespace", 'keystone-appcred-system')
    .option('--workers <n>', `objects of one kind the operator reconciles at once, 1 to 64 (default: the construct's, ${DEFAULT_WORKERS})`)
    .option('--sample', 'add sample orders: ControlPlane openstack/cp assigning tenant-a, and the ServiceOwner workflow there (apply the CRDs first)')
    .option('--consumer-handoff', 'let the operator roll the workloads annotated c5c3.io/rollout-on-credential-switch when their credential switches (adds get, list, watch and patch on deployments, statefulsets and daemonsets to its ClusterRole)')
    .option('--monitoring', "add a ServiceMonitor, the alerts as a PrometheusRule and the Grafana dashboard as a ConfigMap for the grafana sidecar, in the operator's namespace (needs prometheus-operator's CRDs)")
    .addOption(
      new Option('--target-cluster', 'print what a registered target cluster needs instead: the four order CRDs and the ClusterRole and binding of the identity the operator uses there').conflicts(['sample', 'consumerHandoff', 'monitoring']),
    )
    .addOption(new Option('--target-service-account <namespace/name>', `with --target-cluster: the service account to bind (default ${DEFAULT_TARGET_SERVICE_ACCOUNT})`).conflicts('targetUser'))
    .option('--target-user <name>', 'with --target-cluster: bind this user instead of a service account')
    .option(
      '--secret-namespaces <list>',
      "grant the operator Secrets only where it needs them: no cluster-scoped rule on Secrets, a Role and RoleBinding <name>-secrets in each namespace of the comma-separated list (the ControlPlanes' namespaces and the namespaces they assign; with --target-cluster, those assigned on that cluster), and for an entry NAMESPACE/SECRET a Role that reads only that Secret (a KeystoneClusterIdentity's source); the operator runs with KAC_SECRET_ACCESS=namespaced",
      secretNamespacesArg,
    )
    .action((opts: CommandOptions) => {
      if (opts.targetCluster) {
        if (opts.secretNamespaces && opts.secretNamespaces.sources.length > 0) {
          const source = opts.secretNamespaces.sources[0];
          command.error(`error: option '--secret-namespaces <list>' with --target-cluster: entry "${source.namespace}/${source.name}" names a Secret, but a target cluster holds no KeystoneClusterIdentity source; give namespaces only`, { code: 'commander.invalidArgument' });
        }
        let yaml: string;
        try {
          yaml = renderTargetClusterManifests({
            ...(opts.targetServiceAccount !== undefined ? { serviceAccount: opts.targetServiceAccount } : {}),
            ...(opts.targetUser !== undefined ? { user: opts.targetUser } : {}),
            ...(opts.secretNamespaces ? { secretNamespaces: opts.secretNamespaces.namespaces } : {}),
          });
        } catch (error) {
          const option = opts.targetUser !== undefined ? '--target-user' : '--target-service-account';
          throw asOptionError(error, { [option]: opts.targetUser ?? opts.targetServiceAccount ?? DEFAULT_TARGET_SERVICE_ACCOUNT }, { 'subject.name': option, 'subject.namespace': option });
        }
        write(yaml);
        return;
      }
      if (opts.targetServiceAccount !== undefined || opts.targetUser !== undefined) {
        command.error(`error: ${opts.targetUser !== undefined ? '--target-user' : '--target-service-account'} applies only with --target-cluster`, { code: 'commander.invalidArgument' });
      }
      const image = opts.image;
      if (image === undefined) {
        command.error("error: required option '--image <IMAGE[:TAG]>' not specified", { code: 'commander.missingMandatoryOptionValue' });
      }
      const options: ManifestsOptions = {
        image: image.image,
        tag: image.tag,
        openBaoAddress: opts.openbaoAddress,
        openBaoRole: opts.openbaoRole,
        ...(opts.openbaoTokenSecret !== undefined ? { openBaoTokenSecret: opts.openbaoTokenSecret } : {}),
        namespace: opts.namespace,
        ...(opts.workers !== undefined ? { workers: Number(opts.workers) } : {}),
        sample: opts.sample === true,
        consumerHandoff: opts.consumerHandoff === true,
        monitoring: opts.monitoring === true,
        ...(opts.secretNamespaces ? { secretGrants: opts.secretNamespaces } : {}),
      };
      let yaml: string;
      try {
        yaml = renderManifests(options);
      } catch (error) {
        throw asOptionError(error, {
          '--image': image.given,
          '--namespace': opts.namespace,
          '--workers': opts.workers,
          '--openbao-address': opts.openbaoAddress,
          '--openbao-role': opts.openbaoRole,
          '--openbao-token-secret': opts.openbaoTokenSecret,
        });
      }
      write(yaml);
    });
  return command;
}
