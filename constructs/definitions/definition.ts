/**
 * What a kind's CRD says, as data: the shape every definition in this folder fills in and {@link CustomResourceDefinition}
 * (constructs/crd.ts) renders. The definitions build on this file and the schema helpers, never on the construct.
 */
import type { PlacedRule, Schema } from '../schema';

/** A printer column of `kubectl get`. */
export interface PrinterColumn {
  /** The column header. */
  readonly name: string;
  /** `string`, `integer` or `date` (shown as an age). */
  readonly type: 'string' | 'integer' | 'date';
  /** The JSONPath into the object. */
  readonly jsonPath: string;
  /** What the column shows. @default none */
  readonly description?: string;
  /** 1 shows the column only with `-o wide`. @default 0 */
  readonly priority?: number;
}

/** Everything a kind's CRD says. */
export interface KindDefinition {
  /** `Namespaced`, or `Cluster` for a cluster-scoped kind. @default "Namespaced" */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** The kind, e.g. `KeystoneApplicationCredential`. */
  readonly kind: string;
  /** The list kind. */
  readonly listKind: string;
  /** The plural resource name. */
  readonly plural: string;
  /** The singular resource name. */
  readonly singular: string;
  /** Short names for `kubectl get`. @default none */
  readonly shortNames?: readonly string[];
  /** What the kind is, shown by `kubectl explain`. */
  readonly description: string;
  /** The spec's schema (an object). */
  readonly spec: Schema;
  /** The status's schema (an object). */
  readonly status: Schema;
  /** The CEL rules, each placed by its path from the object root. */
  readonly rules: readonly PlacedRule[];
  /** The printer columns, in order. */
  readonly columns: readonly PrinterColumn[];
}
