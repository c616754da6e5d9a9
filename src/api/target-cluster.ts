/**
 * How a target cluster is registered with the operator, as multicluster-runtime's kubeconfig provider does it (so
 * platform teams reuse what they know): a Secret in the operator's namespace on the management cluster, labelled
 * `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"`, holding the target cluster's kubeconfig under the key
 * `kubeconfig`. The cluster's name is the Secret's name: the name orders' `namespaceAssignments[].targetClusterRef.name`
 * and the children's cluster label carry. Creating the Secret registers the cluster, changing it reconnects, deleting it
 * deregisters.
 */

/** The label whose value `"true"` marks a Secret that registers a target cluster. */
export const KUBECONFIG_SECRET_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';

/** The key of the registration Secret that holds the kubeconfig. */
export const KUBECONFIG_SECRET_KEY = 'kubeconfig';

/** The label selector of the registration Secrets. */
export const KUBECONFIG_SECRET_SELECTOR = `${KUBECONFIG_SECRET_LABEL}=true`;
