/**
 * Fleet defaults (issue 48): the rotation policy, roles and access rules a platform team sets once on a ControlPlane
 * (`spec.applicationCredentialDefaults`) and per namespace assignment, applied to each KeystoneApplicationCredential
 * that stands on it. Field by field, the first that sets it wins: the order's own field, then the namespace
 * assignment's, then the ControlPlane's, then the CRD's default. An order's own field is one its author wrote: for the
 * two fields with a schema default (`rotation.interval`, `rotation.gracePeriod`) src/api/provenance.ts tells the
 * author's value from the API server's default.
 *
 * Off by default: an order whose ControlPlane sets no defaults (for it) is its spec exactly, and reports no
 * `status.policy`. One that has them reports every value in force and where it came from, so `kubectl get -o yaml`
 * and `keystone-appcred status` say what the order runs with. A combination that breaks the order's own rules (a
 * default interval shorter than the order's own grace period) is refused: the order runs with its own fields and the
 * CRD's defaults, and says so (`CredentialReady=False/DefaultsRefused`).
 */
import {
  DEFAULT_GRACE_PERIOD,
  DEFAULT_INTERVAL,
  POLICY_FIELDS,
  authored,
  validate,
  type ApplicationCredentialDefaults,
  type ControlPlane,
  type KeystoneApplicationCredential,
  type KeystoneApplicationCredentialSpec,
  type PolicyField,
  type PolicySource,
  type PolicyStatus,
  type RotationSpec,
} from '../api';
import { locationOf, namespaceAssignment } from './naming';

/** What an order runs with. */
export interface EffectivePolicy {
  /** The spec with the policy fields in force. */
  readonly spec: KeystoneApplicationCredentialSpec;
  /** `status.policy`: present while the order's ControlPlane sets fleet defaults for it. */
  readonly status?: PolicyStatus;
  /** Why the fleet defaults are not applied (the rule the combination breaks, naming the fields), if they are not. */
  readonly refused?: string;
}

type Levels = readonly { readonly source: PolicySource; readonly defaults: ApplicationCredentialDefaults }[];

/** A field's value in a spec or a defaults block, and whether it counts as set there. */
function valueAt(block: { readonly rotation?: RotationSpec; readonly roles?: readonly string[]; readonly accessRules?: readonly unknown[] }, field: PolicyField): unknown {
  switch (field) {
    case 'rotation.interval':
      return block.rotation?.interval;
    case 'rotation.gracePeriod':
      return block.rotation?.gracePeriod;
    case 'rotation.window':
      return block.rotation?.window;
    case 'rotation.jitterPercent':
      return block.rotation?.jitterPercent;
    case 'roles':
      return block.roles !== undefined && block.roles.length > 0 ? block.roles : undefined;
    case 'accessRules':
      return block.accessRules !== undefined && block.accessRules.length > 0 ? block.accessRules : undefined;
  }
}

/** Whether the order's author wrote `field` (the schema-defaulted ones by their provenance). */
function own(order: KeystoneApplicationCredential, field: PolicyField): boolean {
  if (field === 'rotation.interval') return authored(order, 'interval');
  if (field === 'rotation.gracePeriod') return authored(order, 'gracePeriod');
  return valueAt(order.spec, field) !== undefined;
}

/** The spec with `values` as its policy fields (absent ones left to the CRD's defaults). */
function withValues(spec: KeystoneApplicationCredentialSpec, values: ReadonlyMap<PolicyField, unknown>): KeystoneApplicationCredentialSpec {
  const rest: { -readonly [K in keyof KeystoneApplicationCredentialSpec]?: KeystoneApplicationCredentialSpec[K] } = { ...spec };
  delete rest.roles;
  delete rest.accessRules;
  const rotation: Record<string, unknown> = {};
  for (const field of ['interval', 'gracePeriod', 'window', 'jitterPercent'] as const) {
    const value = values.get(`rotation.${field}`);
    if (value !== undefined) rotation[field] = value;
  }
  const roles = values.get('roles') as readonly string[] | undefined;
  const accessRules = values.get('accessRules') as KeystoneApplicationCredentialSpec['accessRules'];
  return { ...(rest as KeystoneApplicationCredentialSpec), rotation: rotation as RotationSpec, ...(roles ? { roles } : {}), ...(accessRules ? { accessRules } : {}) };
}

/**
 * The policy `order` runs with under `controlPlane` (absent: none known, the order's spec as it is), for an order on
 * `cluster` (absent: the management cluster); see the module comment.
 */
export function effectivePolicy(order: KeystoneApplicationCredential, controlPlane: ControlPlane | undefined, cluster?: string): EffectivePolicy {
  const assignment = controlPlane ? namespaceAssignment(controlPlane, locationOf(order, cluster)) : undefined;
  const levels: Levels = [
    ...(assignment?.applicationCredentialDefaults ? [{ source: 'NamespaceAssignment' as const, defaults: assignment.applicationCredentialDefaults }] : []),
    ...(controlPlane?.spec.applicationCredentialDefaults ? [{ source: 'ControlPlane' as const, defaults: controlPlane.spec.applicationCredentialDefaults }] : []),
  ];
  if (levels.length === 0) return { spec: order.spec };
  const values = new Map<PolicyField, unknown>();
  const sources = {} as Record<PolicyField, PolicySource>;
  for (const field of POLICY_FIELDS) {
    if (own(order, field)) {
      values.set(field, valueAt(order.spec, field));
      sources[field] = 'Order';
      continue;
    }
    const level = levels.find((l) => valueAt(l.defaults, field) !== undefined);
    if (level) values.set(field, valueAt(level.defaults, field));
    sources[field] = level?.source ?? 'Default';
  }
  const spec = withValues(order.spec, values);
  const broken = validate({ spec }, undefined, 'settings');
  if (broken.length > 0) {
    const named = broken.map((v) => `${v.message} (${fieldSources(v.field, sources)})`).join('; ');
    return { spec: order.spec, refused: `the fleet defaults are not applied: with them, ${named}` };
  }
  const rotation = spec.rotation ?? {};
  return {
    spec,
    status: {
      rotation: { ...rotation, interval: rotation.interval ?? DEFAULT_INTERVAL, gracePeriod: rotation.gracePeriod ?? DEFAULT_GRACE_PERIOD },
      ...(spec.roles ? { roles: spec.roles } : {}),
      ...(spec.accessRules ? { accessRules: spec.accessRules } : {}),
      sources,
    },
  };
}

/**
 * The policy an order runs with, as `keystone-appcred status` shows it: `status.policy` when the operator recorded one
 * (fleet defaults apply), else the order's own spec with the CRD's defaults, each field's source `Order` or `Default`.
 */
export function policyInForce(order: KeystoneApplicationCredential): PolicyStatus {
  if (order.status?.policy) return order.status.policy;
  const sources = Object.fromEntries(POLICY_FIELDS.map((field) => [field, own(order, field) ? 'Order' : 'Default'])) as Record<PolicyField, PolicySource>;
  const rotation = order.spec.rotation ?? {};
  return {
    rotation: { ...rotation, interval: rotation.interval || DEFAULT_INTERVAL, gracePeriod: rotation.gracePeriod || DEFAULT_GRACE_PERIOD },
    ...(order.spec.roles && order.spec.roles.length > 0 ? { roles: order.spec.roles } : {}),
    ...(order.spec.accessRules && order.spec.accessRules.length > 0 ? { accessRules: order.spec.accessRules } : {}),
    sources,
  };
}

/** Where the fields a violation names came from: `rotation.interval from ControlPlane, rotation.gracePeriod from Order`. */
function fieldSources(field: string, sources: Readonly<Record<PolicyField, PolicySource>>): string {
  const named = POLICY_FIELDS.filter((f) => field === `spec.${f}` || field.startsWith(`spec.${f}.`) || (field === 'spec.rotation' && f.startsWith('rotation.') && (f === 'rotation.interval' || f === 'rotation.gracePeriod')));
  return named.map((f) => `${f} from ${sources[f]}`).join(', ');
}
