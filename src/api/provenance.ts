/**
 * Which of an order's schema-defaulted fields its author wrote (issue 48, fleet defaults): `spec.rotation.interval`
 * and `spec.rotation.gracePeriod` carry CRD schema defaults (720h, 24h) that the API server stores as written (spec,
 * Spec), so an order that left `interval` out and one that wrote `720h` look the same in the object. A fleet default
 * must fill the first and leave the second alone. Every other policy field has no schema default: present is the
 * author's.
 *
 * The object says it three ways, read in this order:
 * - a value other than the default's literal (`720h0m0s` from a Go client that set it, `168h`) is the author's: the
 *   API server writes its defaults as the schema spells them;
 * - server-side apply (`kubectl apply --server-side`, Flux, Helm 4, a cdk8s chart applied server-side): the field is
 *   owned by a manager whose operation is `Apply`, which it is only when that manager sent it; the API server's
 *   defaults belong to no applier;
 * - client-side `kubectl apply` (Argo CD's default): the last-applied annotation holds what the author applied.
 * What none of them tells: an object created or replaced with an update (`kubectl create`, `kubectl replace`, Helm 3, a
 * client's PUT) that wrote the literal `720h` or `24h`. The API server defaults before it records an update's fields,
 * so the updater owns the default as if written: such a field counts as defaulted, and the fleet default fills it. To
 * keep exactly the CRD's default against a fleet default from such a client, write it another way (`720h0m0s`).
 *
 * A cache keeps of each order only what these rules read ({@link slimOrder}), so the operator reads the same answer
 * from its cache as `keystone-appcred status` from the API server.
 */
import { DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from './defaults';
import type { RotationSpec } from './types';

/** The annotation `kubectl apply` keeps the applied object in. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The fields a schema default fills, with the literal the API server writes. */
export const SCHEMA_DEFAULTED = { interval: DEFAULT_INTERVAL, gracePeriod: DEFAULT_GRACE_PERIOD } as const;
/** A field a schema default fills. */
export type DefaultedField = keyof typeof SCHEMA_DEFAULTED;

/** One `metadata.managedFields` entry, as far as these rules read it. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly fieldsType?: string;
  readonly fieldsV1?: unknown;
}

/** What the rules read of an order. */
export interface ProvenanceSource {
  readonly metadata: {
    readonly managedFields?: readonly ManagedFieldsEntry[];
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: { readonly rotation?: RotationSpec };
}

const FIELDS = Object.keys(SCHEMA_DEFAULTED) as DefaultedField[];

/** The `fieldsV1` node of `spec.rotation.<field>`, if the entry owns it. */
function ownsField(entry: ManagedFieldsEntry, field: DefaultedField): boolean {
  const spec = (entry.fieldsV1 as Record<string, unknown> | undefined)?.['f:spec'] as Record<string, unknown> | undefined;
  const rotation = spec?.['f:rotation'] as Record<string, unknown> | undefined;
  return rotation !== undefined && `f:${field}` in rotation;
}

/** The rotation block of the last-applied annotation, if it parses. */
function appliedRotation(annotations: Readonly<Record<string, string>> | undefined): Record<string, unknown> | undefined {
  const text = annotations?.[LAST_APPLIED];
  if (text === undefined) return undefined;
  try {
    const applied = JSON.parse(text) as { spec?: { rotation?: Record<string, unknown> } };
    return applied.spec?.rotation ?? {};
  } catch {
    return undefined;
  }
}

/** Whether the order's author wrote `spec.rotation.<field>`; see the module comment. */
export function authored(order: ProvenanceSource, field: DefaultedField): boolean {
  const value = order.spec?.rotation?.[field];
  if (value === undefined) return false;
  if (value !== SCHEMA_DEFAULTED[field]) return true;
  if ((order.metadata.managedFields ?? []).some((entry) => entry.operation === 'Apply' && ownsField(entry, field))) return true;
  return appliedRotation(order.metadata.annotations)?.[field] !== undefined;
}

/**
 * The order as a cache keeps it: `slimmed` (the cache's object without managedFields and the last-applied annotation),
 * with only what {@link authored} reads put back when it matters (a field holding the default's literal): the `Apply`
 * entries that own it, pruned to it, and the last-applied annotation pruned to the rotation fields.
 */
export function slimOrder<T extends ProvenanceSource>(full: T, slimmed: T): T {
  const ambiguous = FIELDS.filter((field) => full.spec?.rotation?.[field] === SCHEMA_DEFAULTED[field]);
  if (ambiguous.length === 0) return slimmed;
  const applies = (full.metadata.managedFields ?? []).flatMap((entry) => {
    const owned = ambiguous.filter((field) => entry.operation === 'Apply' && ownsField(entry, field));
    if (owned.length === 0) return [];
    const rotation = Object.fromEntries(owned.map((field) => [`f:${field}`, {}]));
    return [{ manager: entry.manager, operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rotation': rotation } } }];
  });
  const applied = appliedRotation(full.metadata.annotations);
  const kept = applied && Object.fromEntries(ambiguous.filter((field) => applied[field] !== undefined).map((field) => [field, applied[field]]));
  const annotation = kept && Object.keys(kept).length > 0 ? { [LAST_APPLIED]: JSON.stringify({ spec: { rotation: kept } }) } : undefined;
  if (applies.length === 0 && annotation === undefined) return slimmed;
  return {
    ...slimmed,
    metadata: {
      ...slimmed.metadata,
      ...(applies.length > 0 ? { managedFields: applies } : {}),
      ...(annotation ? { annotations: { ...slimmed.metadata.annotations, ...annotation } } : {}),
    },
  };
}
