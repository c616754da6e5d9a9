/**
 * The KeystoneClusterIdentity CRD (issue 11, terraformclusteridentity.md): cluster-scoped, bounds from
 * `ClusterIdentityLimits` and `LabelSelectorLimits`, the default from `ClusterIdentityDefaults`, rules from
 * `CLUSTER_IDENTITY_RULES`.
 */
import { ClusterIdentityDefaults, ClusterIdentityKind, ClusterIdentityLimits as L } from '../../src/api/cluster-identity';
import { CLUSTER_IDENTITY_RULES } from '../../src/api/cluster-identity-rules';
import { LABEL_SELECTOR_OPERATORS, LabelSelectorLimits as S } from '../../src/api/label-selector';
import type { KindDefinition } from './definition';
import { array, conditions, object, string, type Schema } from '../schema';

const labelValue = (description: string): Schema => string({ description, minLength: 0, maxLength: S.valueMaxLength });

/** `metav1.LabelSelector`, bounded so the CEL rules over it stay within the API server's cost budget. */
const labelSelector: Schema = object(
  'A label selector over the labels of the Namespace object: every matchLabels pair and every matchExpressions entry must hold. {} matches every namespace.',
  {
    matchLabels: {
      type: 'object',
      description: 'Labels the namespace must carry with exactly these values.',
      additionalProperties: labelValue('A label value.'),
      maxProperties: S.matchLabelsMaxProperties,
    },
    matchExpressions: array(
      'Requirements the namespace\'s labels must all meet.',
      object(
        'A label selector requirement.',
        {
          key: string({ description: 'The label key.', maxLength: S.keyMaxLength }),
          operator: string({ description: 'In, NotIn, Exists or DoesNotExist.', maxLength: 12, enum: LABEL_SELECTOR_OPERATORS }),
          values: array('Label values: non-empty for In and NotIn, empty for Exists and DoesNotExist.', labelValue('A label value.'), {
            maxItems: S.valuesMaxItems,
            listType: 'atomic',
          }),
        },
        ['key', 'operator'],
      ),
      { maxItems: S.matchExpressionsMaxItems, listType: 'atomic' },
    ),
  },
);

/** KeystoneClusterIdentity: one admin credentials Secret, shared with the namespaces allowed to use it. */
export const KEYSTONE_CLUSTER_IDENTITY: KindDefinition = {
  ...ClusterIdentityKind,
  scope: 'Cluster',
  description:
    'KeystoneClusterIdentity names a Secret holding a Keystone admin clouds.yaml and the namespaces whose ControlPlanes may use it through spec.adminCredential.identityRef; the operator mirrors the Secret into each such namespace as keystone-creds-<name>.',
  spec: object(
    'KeystoneClusterIdentitySpec. Every field is mutable.',
    {
      secretRef: object(
        'The credentials Secret, whose key clouds.yaml holds a password cloud or an application credential (auth_type v3applicationcredential) with admin rights. Its author must be allowed to get it.',
        {
          name: string({ description: 'The Secret\'s name: a DNS subdomain.', maxLength: L.secretNameMaxLength }),
          namespace: string({ description: 'The Secret\'s namespace: a DNS label. Never defaulted; it need not be an allowed namespace.', maxLength: L.namespaceMaxLength }),
        },
        ['name', 'namespace'],
      ),
      cloudName: string({ description: 'The cloud in clouds.yaml.', maxLength: L.cloudNameMaxLength, default: ClusterIdentityDefaults.cloudName }),
      allowedNamespaces: object(
        'Which namespaces may use the identity: the union of list and selector. Unset allows none; {} is refused (write selector: {} for every namespace).',
        {
          list: array('Names of allowed namespaces.', string({ description: 'A namespace: a DNS label.', maxLength: L.namespaceMaxLength }), {
            minItems: L.listMinItems,
            maxItems: L.listMaxItems,
            listType: 'set',
          }),
          selector: labelSelector,
        },
      ),
    },
    ['secretRef'],
  ),
  status: object('KeystoneClusterIdentityStatus, written by the operator.', {
    conditions: conditions('Ready: SecretFound or SecretNotFound.', L.conditionsMaxItems),
    namespaces: array(
      'Sorted namespaces that hold a correct mirror and a ControlPlane using the identity; deletion is refused while any is listed.',
      string({ description: 'A namespace.', maxLength: L.namespaceMaxLength }),
      { maxItems: L.statusNamespacesMaxItems, listType: 'set' },
    ),
  }),
  rules: CLUSTER_IDENTITY_RULES,
  columns: [
    { name: 'Secret', type: 'string', jsonPath: '.spec.secretRef.name' },
    { name: 'Namespace', type: 'string', jsonPath: '.spec.secretRef.namespace' },
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
