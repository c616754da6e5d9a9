/**
 * The namespaced Secret access in a cdk8s app (issue 34): the ControlPlanes and KeystoneClusterIdentities declared in the
 * app say where the operator needs Secrets (src/api/secret-access.ts), and every `Operator` (and `TargetCluster`) with
 * `secretAccess: 'namespaced'` in the same app emits a Role and RoleBinding there, so one `cdk8s synth` gives a
 * consistent set. Declaration order does not matter: an operator declared after the ControlPlanes grants what they
 * assign at once, one declared before them grants it as they are declared (and as `assignNamespace` adds to them).
 *
 * Each Role is emitted beside the object that needs it, as a child of the ControlPlane (its namespace, its assignments),
 * of the identity (its source Secret, its `allowedNamespaces.list`) or of the operator (its `secretNamespaces`): in the
 * same chart, after the namespaces that chart declares before it, so an apply of the chart creates the namespaces first.
 * One namespace gets one Role per operator, however many ControlPlanes name it.
 */
import { Construct, type IConstruct } from 'constructs';
import { SecretAccessMode, SECRET_ACCESS_MODES, type SecretRef } from '../src/api/secret-access';
import { kubeObject, type PolicyRule, type StringMap, type Subject } from './kube';
import type { JustifiedRule } from './operator-rbac';

/**
 * How the operator is granted Secrets (issue 34; docs/install/namespaced.md, docs/reference/rbac.md); the members' values are
 * the engine's `SecretAccessMode` (src/api/secret-access.ts), which the operator reads from `KAC_SECRET_ACCESS`.
 */
export enum SecretAccess {
  /** One cluster-scoped rule on Secrets in every namespace. */
  CLUSTER_WIDE = 'cluster-wide',
  /** A Role and RoleBinding per namespace that needs Secrets; no cluster-scoped rule on Secrets. */
  NAMESPACED = 'namespaced',
}

// The enum is the engine's set of modes under jsii's naming, checked both ways when this file compiles.
const ENGINE_MODE: { readonly [mode in SecretAccess]: SecretAccessMode } = { [SecretAccess.CLUSTER_WIDE]: SecretAccessMode.ClusterWide, [SecretAccess.NAMESPACED]: SecretAccessMode.Namespaced };
const CONSTRUCT_MODE: { readonly [mode in SecretAccessMode]: SecretAccess } = { [SecretAccessMode.ClusterWide]: SecretAccess.CLUSTER_WIDE, [SecretAccessMode.Namespaced]: SecretAccess.NAMESPACED };

/** The engine's mode of a construct's `secretAccess`; throws naming the prop for a value that is none (a JavaScript caller's string). */
export function secretAccessMode(fail: (prop: string, value: unknown, rule: string) => never, value: SecretAccess): SecretAccessMode {
  const mode = ENGINE_MODE[value];
  if (mode === undefined || CONSTRUCT_MODE[mode] !== value) fail('secretAccess', value, `must be one of ${SECRET_ACCESS_MODES.join(', ')}`);
  return mode;
}

/** A ControlPlane as the registry reads it: the construct its Roles are emitted under, its namespace, its assignments. */
export interface RegisteredControlPlane {
  /** The ControlPlane construct (the Roles of its namespaces are emitted as its children). */
  readonly construct: Construct;
  /** Its namespace, if set on it or its chart. */
  readonly namespace: string | undefined;
  /** Its assignments as emitted; `assignNamespace` adds to the same array. */
  readonly assignments: readonly { readonly namespace: string; readonly targetClusterRef?: { readonly name: string } }[];
}

/** A KeystoneClusterIdentity as the registry reads it. */
export interface RegisteredIdentity {
  /** The identity construct (the Roles it needs are emitted as its children). */
  readonly construct: Construct;
  /** Its source Secret. */
  readonly secretRef: SecretRef;
  /** Its `allowedNamespaces.list`. */
  readonly allowedList: readonly string[];
}

/** A construct that emits Roles as the app's ControlPlanes and identities are declared. */
export interface SecretGrantee {
  /** Called once when it registers and again whenever a ControlPlane or identity is declared or changed. */
  grant(): void;
}

const REGISTRIES = new WeakMap<IConstruct, SecretAccessRegistry>();

/** The ControlPlanes, identities and grantees of one app (one construct tree). */
export class SecretAccessRegistry {
  readonly controlPlanes: RegisteredControlPlane[] = [];
  readonly identities: RegisteredIdentity[] = [];
  private readonly grantees: SecretGrantee[] = [];

  /** The registry of the app `scope` belongs to. */
  static of(scope: IConstruct): SecretAccessRegistry {
    const root = scope.node.root;
    let registry = REGISTRIES.get(root);
    if (!registry) REGISTRIES.set(root, (registry = new SecretAccessRegistry()));
    return registry;
  }

  /** Registers a ControlPlane (from its constructor). */
  addControlPlane(controlPlane: RegisteredControlPlane): void {
    this.controlPlanes.push(controlPlane);
    this.changed();
  }

  /** Registers a KeystoneClusterIdentity (from its constructor). */
  addIdentity(identity: RegisteredIdentity): void {
    this.identities.push(identity);
    this.changed();
  }

  /** Registers a grantee and lets it grant what is declared so far. */
  addGrantee(grantee: SecretGrantee): void {
    this.grantees.push(grantee);
    grantee.grant();
  }

  /** A ControlPlane or identity changed (e.g. `assignNamespace`): every grantee grants again. */
  changed(): void {
    for (const grantee of this.grantees) grantee.grant();
  }
}

/** The `app.kubernetes.io/component` label of every Role and RoleBinding of the namespaced Secret access. */
export const SECRET_ACCESS_COMPONENT = 'secret-access';

/** A Role and its RoleBinding, emitted as one construct. */
export class SecretRole extends Construct {
  /** The namespace. */
  readonly namespace: string;
  /** The rules granted there. */
  readonly rules: readonly JustifiedRule[];

  constructor(
    scope: Construct,
    id: string,
    props: { readonly name: string; readonly namespace: string; readonly rules: readonly JustifiedRule[]; readonly subject: Subject; readonly labels: StringMap; readonly policyRule: (rule: JustifiedRule) => PolicyRule },
  ) {
    super(scope, id);
    this.namespace = props.namespace;
    this.rules = props.rules;
    // Labelled apart, so the Roles alone can be applied ahead of a move to the namespaced mode (`kubectl apply -l`).
    const metadata = { name: props.name, namespace: props.namespace, labels: { ...props.labels, 'app.kubernetes.io/component': SECRET_ACCESS_COMPONENT } };
    const role = kubeObject(this, 'Role', 'Role', { metadata, rules: props.rules.map(props.policyRule) });
    const binding = kubeObject(this, 'RoleBinding', 'RoleBinding', {
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: props.name },
      subjects: [{ ...props.subject }],
    });
    binding.node.addDependency(role);
  }
}

/** Where a namespace's or source's Role of one grantee lives, and the construct that emits it. */
interface Emitted {
  readonly owner: IConstruct;
  readonly id: string;
}

/**
 * The Roles one grantee emitted, by namespace (`ns`) and by source (`ns/secret`): adds what the registry names and is not
 * emitted yet, and removes the Role of a source whose namespace is granted whole since.
 */
export class EmittedRoles {
  private readonly namespaces = new Map<string, Emitted>();
  private readonly sources = new Map<string, Emitted>();

  /** The namespaces granted, sorted. */
  granted(): string[] {
    return [...this.namespaces.keys()].sort();
  }

  /** The source Secrets granted read only, sorted. */
  grantedSources(): SecretRef[] {
    return [...this.sources.keys()].sort().map((key) => ({ namespace: key.slice(0, key.indexOf('/')), name: key.slice(key.indexOf('/') + 1) }));
  }

  /** Emits the Role of `namespace` under `owner` unless one is emitted already. */
  namespace(namespace: string, owner: Construct, id: string, emit: (scope: Construct, id: string) => void): void {
    if (this.namespaces.has(namespace)) return;
    emit(owner, id);
    this.namespaces.set(namespace, { owner, id });
    for (const [key, source] of this.sources) {
      if (!key.startsWith(`${namespace}/`)) continue;
      source.owner.node.tryRemoveChild(source.id);
      this.sources.delete(key);
    }
  }

  /** Emits the read-only Role of a source Secret under `owner`, unless its namespace or it is granted already. */
  source(ref: SecretRef, owner: Construct, id: string, emit: (scope: Construct, id: string) => void): void {
    const key = `${ref.namespace}/${ref.name}`;
    if (this.namespaces.has(ref.namespace) || this.sources.has(key)) return;
    emit(owner, id);
    this.sources.set(key, { owner, id });
  }
}
