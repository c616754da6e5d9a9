/**
 * `status`'s rows: the kinds it lists, and what one row says of an object (readiness and reason, generation, next
 * rotation, grace period), sorted as they are printed.
 */
import {
  ConditionType,
  CredentialReason,
  DEFAULT_CREDENTIAL_GENERATION,
  DEFAULT_INTERVAL,
  formatTime,
  resolveWindow,
  type Condition,
  type KeystoneApplicationCredential,
  type PolicyStatus,
} from '../../api';
import { nextOpening, openAt, type Opening } from '../../lifecycle/window';
import { policyInForce } from '../../plane/policy';
import { PlaneDefaults, type ControlPlane, type KeystoneProject, type KeystoneRoleAssignment, type KeystoneUser } from '../../api/identity-plane';
import { Kinds } from '../../kube/kinds';

/** The kinds `status` lists, in the order their rows are shown within a namespace (referenced before referrers). */
export const STATUS_KINDS = [
  Kinds.ControlPlane,
  Kinds.KeystoneProject,
  Kinds.KeystoneUser,
  Kinds.KeystoneRoleAssignment,
  Kinds.KeystoneApplicationCredential,
] as const;

/** A kind `status` lists. */
export type StatusKind = (typeof STATUS_KINDS)[number]['kind'];

/** The condition each kind reports its readiness in (the CRDs' Ready printer column reads the same). */
export const READINESS_CONDITION: Readonly<Record<StatusKind, string>> = {
  ControlPlane: 'Ready',
  KeystoneProject: 'ProjectReady',
  KeystoneUser: 'Ready',
  KeystoneRoleAssignment: 'AssignmentReady',
  KeystoneApplicationCredential: 'Ready',
};

/** One row of `status`: what `-o json` and `-o yaml` print for each object. Absent values are null. */
export interface OrderStatus {
  /** The registered target cluster the object lives on; absent for the management cluster. */
  readonly cluster?: string;
  readonly kind: StatusKind;
  readonly namespace: string;
  readonly name: string;
  /** The readiness condition's status (`Ready`; `ProjectReady`, `AssignmentReady`); null before the operator reported. */
  readonly ready: 'True' | 'False' | 'Unknown' | null;
  /**
   * Why: the readiness condition's reason, except that a KeystoneApplicationCredential's `NotAllReady` is replaced by the
   * reason of its first sub-condition (CredentialReady, DeliveryReady) that is not True.
   */
  readonly reason: string | null;
  /** The message of the condition the reason came from. */
  readonly message: string | null;
  /** The generation held: `status.credentialGeneration` or `status.passwordGeneration`; null for the other kinds. */
  readonly generation: number | null;
  /** The generation ordered: `spec.credentialGeneration` or `spec.passwordGeneration` (default 1); null for the other kinds. */
  readonly orderedGeneration: number | null;
  /** `spec.rotation.interval` of a KeystoneApplicationCredential (`0s`: the schedule is off); else null. */
  readonly rotationInterval: string | null;
  /** `status.nextRotation` (RFC 3339). */
  readonly nextRotation: string | null;
  /** A KeystoneApplicationCredential in its grace period: the superseded generation and when it is deleted. */
  readonly gracePeriod: { readonly previousGeneration: number; readonly until: string | null } | null;
  /**
   * A KeystoneApplicationCredential's policy in force (issue 48): `status.policy` when fleet defaults apply, else its own
   * spec with the CRD's defaults, with where each field came from (`Order`, `NamespaceAssignment`, `ControlPlane`,
   * `Default`); null for the other kinds.
   */
  readonly policy: PolicyStatus | null;
  /**
   * Its rotation window (issue 48): the opening it is open in now, or the next one (RFC 3339), and whether the
   * operator refused it; null without a window and for the other kinds.
   */
  readonly window: { readonly open: boolean; readonly opens: string | null; readonly closes: string | null; readonly refused: boolean } | null;
}

/** An object of one of the five kinds. */
export type AnyOrder = ControlPlane | KeystoneProject | KeystoneUser | KeystoneRoleAssignment | KeystoneApplicationCredential;

/** The row of one object (its `kind` says which of the five it is). */
export function orderStatus(object: AnyOrder, now: Date = new Date()): OrderStatus {
  const kind = object.kind;
  const conditions = object.status?.conditions ?? [];
  const readiness = conditions.find((c) => c.type === READINESS_CONDITION[kind]);
  let because: Condition | undefined = readiness;
  if (kind === 'KeystoneApplicationCredential' && readiness?.status !== 'True' && (readiness === undefined || readiness.reason === 'NotAllReady')) {
    because = ['CredentialReady', 'DeliveryReady'].map((t) => conditions.find((c) => c.type === t)).find((c) => c !== undefined && c.status !== 'True') ?? readiness;
  }
  const base = {
    kind,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    ready: readiness?.status ?? null,
    reason: because?.reason || null,
    message: because?.message || null,
  };
  const none = { generation: null, orderedGeneration: null, rotationInterval: null, nextRotation: null, gracePeriod: null, policy: null, window: null };
  if (object.kind === 'KeystoneApplicationCredential') {
    const status = object.status;
    const policy = policyInForce(object);
    return {
      ...base,
      generation: status?.credentialGeneration ?? null,
      orderedGeneration: object.spec.credentialGeneration || DEFAULT_CREDENTIAL_GENERATION,
      rotationInterval: policy.rotation.interval ?? DEFAULT_INTERVAL,
      policy,
      window: windowOf(policy, conditions, now),
      nextRotation: status?.nextRotation ?? null,
      gracePeriod:
        status?.previousCredentialGeneration !== undefined
          ? { previousGeneration: status.previousCredentialGeneration, until: status.previousCredentialDeleteAt ?? null }
          : null,
    };
  }
  if (object.kind === 'KeystoneUser') {
    return { ...none, ...base, generation: object.status?.passwordGeneration ?? null, orderedGeneration: object.spec.passwordGeneration || PlaneDefaults.passwordGeneration };
  }
  return { ...none, ...base };
}

/** The window cell's facts: open now or the next opening, and whether the operator refused it (its condition). */
function windowOf(policy: PolicyStatus, conditions: readonly Condition[], now: Date): OrderStatus['window'] {
  const window = policy.rotation.window;
  if (!window) return null;
  const refused = conditions.some((c) => c.type === ConditionType.CredentialReady && c.reason === CredentialReason.RotationWindowRefused);
  let opening: Opening | undefined;
  try {
    const resolved = resolveWindow(window, 'rotation.window');
    opening = openAt(resolved, now) ?? nextOpening(resolved, now);
  } catch {
    opening = undefined; // a schedule or zone that cannot be read: the operator's condition says why
  }
  const at = (d: Date | undefined) => (d ? formatTime(d) : null);
  return { open: opening !== undefined && opening.opens <= now, opens: at(opening?.opens), closes: at(opening?.closes), refused };
}

/** Rows in the order `status` prints them: the management cluster's first, then by cluster, namespace, kind (ControlPlane first), name. */
export function sortRows(rows: readonly OrderStatus[]): OrderStatus[] {
  const rank = (kind: StatusKind) => STATUS_KINDS.findIndex((k) => k.kind === kind);
  return [...rows].sort(
    (a, b) => (a.cluster ?? '').localeCompare(b.cluster ?? '') || a.namespace.localeCompare(b.namespace) || rank(a.kind) - rank(b.kind) || a.name.localeCompare(b.name),
  );
}

