/**
 * The downward API as the kubelet fills it for the pod runner (test/support/pod.ts): a `fieldRef`'s value and a
 * `resourceFieldRef`'s, from the pod's identity and its container's resources.
 */
/** The downward API's value of `fieldPath` for this pod. */
export function fieldValue(fieldPath: string, pod: { name: string; namespace: string; serviceAccount: string }): string {
  switch (fieldPath) {
    case 'metadata.name':
      return pod.name;
    case 'metadata.namespace':
      return pod.namespace;
    case 'spec.serviceAccountName':
      return pod.serviceAccount;
    case 'status.podIP':
    case 'status.hostIP':
      return '127.0.0.1';
    default:
      throw new Error(`the pod runner does not fill the downward API field ${fieldPath}`);
  }
}

/** A Kubernetes quantity (`512Mi`, `100m`, `1`) as a number. */
function quantity(value: string | number): number {
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(value));
  if (!match) throw new Error(`the pod runner cannot read the quantity ${String(value)}`);
  const factor: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
  return Number(match[1]) * (factor[match[2] ?? ''] as number);
}

/**
 * A downward-API `resourceFieldRef` as the kubelet fills it: the container's limit or request, divided by the divisor
 * and rounded up. A limit the container does not set is the node's allocatable there, which this runner does not have.
 */
export function resourceValue(
  ref: { readonly resource: string; readonly divisor?: string | number },
  container: { readonly resources?: { readonly limits?: Readonly<Record<string, string | number>>; readonly requests?: Readonly<Record<string, string | number>> } },
): string {
  const [section, name] = ref.resource.split('.') as [string, string];
  const amount = section === 'limits' || section === 'requests' ? container.resources?.[section]?.[name] : undefined;
  if (amount === undefined) throw new Error(`the pod runner does not resolve resourceFieldRef ${ref.resource}: the container sets no ${ref.resource}`);
  return String(Math.ceil(quantity(amount) / quantity(ref.divisor ?? '1')));
}
