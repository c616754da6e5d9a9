/**
 * A Kubernetes label selector (`metav1.LabelSelector`) as the constructs take it, for a KeystoneClusterIdentity's
 * `allowedNamespaces.selector`: the library's own struct, so its closure is `cdk8s` and `constructs` alone. Its shape is
 * `metav1.LabelSelector`'s (and cdk8s-plus's `k8s.LabelSelector`'s), so a selector written for either is one here.
 *
 * The engine's type of the same object, with the matching Kubernetes applies, is src/api/label-selector.ts.
 */

/** One `matchExpressions` entry (`metav1.LabelSelectorRequirement`). */
export interface LabelSelectorRequirement {
  /** The label key: a qualified name, optionally prefixed by a DNS subdomain and `/`. */
  readonly key: string;
  /**
   * `In`, `NotIn`, `Exists` or `DoesNotExist`, as Kubernetes spells them; any other fails the synth with the CRD rule's
   * message, naming the field.
   */
  readonly operator: string;
  /** Label values: non-empty for `In` and `NotIn`, empty or left out for `Exists` and `DoesNotExist`. @default none */
  readonly values?: string[];
}

/**
 * Labels to select by (`metav1.LabelSelector`): every `matchLabels` pair and every `matchExpressions` entry must hold.
 * An empty selector (`{}`) selects everything.
 */
export interface LabelSelector {
  /** Labels that must be present with exactly these values. @default none */
  readonly matchLabels?: { [key: string]: string };
  /** Requirements that must all hold. @default none */
  readonly matchExpressions?: LabelSelectorRequirement[];
}
