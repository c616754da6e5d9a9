/**
 * The KeystoneApplicationCredential kind's CRD (spec: API Group and Version, Spec, Status, Defaulting and Validation
 * Summary). Bounds come from `Limits`, defaults from `src/api/defaults.ts`, rules from `RULES`: nothing is restated here.
 */
import { AdoptionLimits, DEFAULT_ADOPT_SECRET_KEY } from '../../src/api/adoption';
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL } from '../../src/api/defaults';
import { DELETION_POLICIES } from '../../src/api/deletion-policy';
import { LabelSelectorLimits } from '../../src/api/label-selector';
import { ACCESS_RULE_METHODS, PrivilegeLimits } from '../../src/api/privileges';
import { SECRET_FORMATS, SecretTemplateLimits as T, TEMPLATE_FIELDS } from '../../src/api/secret-template';
import { Limits, RULES } from '../../src/api/rules';
import { REVOKE_REQUEST_MAX_LENGTH } from '../../src/api/naming';
import { KIND, LIST_KIND, PLURAL } from '../../src/api/types';
import type { KindDefinition } from './definition';
import { array, conditions, int64, localRef, object, string, time, type Schema } from '../schema';

/** A Go duration as `time.ParseDuration` reads it (a lone `0` needs no unit). */
export const GO_DURATION_PATTERN = '^[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$';

/** The longest duration string the schema accepts (`Limits.durationMaxLength`, which `validate` checks too). */
export const DURATION_MAX_LENGTH = Limits.durationMaxLength;

/** A Go-format duration field. */
export function durationField(description: string, defaultValue: string): Schema {
  return string({ description, maxLength: DURATION_MAX_LENGTH, pattern: GO_DURATION_PATTERN, default: defaultValue });
}

/**
 * `controlPlaneRef`, shared with the neighbour kinds. `namespace` is optional: left out, it means the order's own
 * namespace (a schema default cannot be `metadata.namespace`, so the readers resolve it with `controlPlaneNamespace`).
 */
export function controlPlaneRefSchema(maxLength: number): Schema {
  return object(
    'The ControlPlane whose identity plane the order is created in. Both halves are immutable.',
    {
      name: string({ description: 'The ControlPlane\'s name.', maxLength }),
      namespace: string({ description: 'The ControlPlane\'s namespace, a DNS label; defaults to the order\'s own namespace.', maxLength }),
    },
    ['name'],
  );
}

/** An object of free keys whose values are strings: labels, annotations, a Secret's data. */
const stringMap = (description: string, value: Schema, maxProperties: number): Schema => ({ type: 'object', description, additionalProperties: value, maxProperties });

/** `spec.secretTemplate` (issue 49): bounds from `SecretTemplateLimits`, rules from `SECRET_TEMPLATE_RULES`. */
const secretTemplate = object(
  "Not in the reference (an extension): what the delivered Secret carries beside the reference's three keys and the operator's two labels. The operator owns exactly what it writes (server-side apply): a key, label or annotation removed here is removed from the Secret, one another writer added stays.",
  {
    labels: stringMap(
      "Labels the delivered Secret carries (not the operator's own, c5c3.io/keystoneapplicationcredential-*).",
      string({ description: 'A label value.', minLength: 0, maxLength: LabelSelectorLimits.valueMaxLength }),
      T.labelsMaxProperties,
    ),
    annotations: stringMap(
      "Annotations the delivered Secret carries (not the operator's own, c5c3.io/keystoneapplicationcredential-*).",
      string({ description: 'An annotation value.', minLength: 0, maxLength: T.annotationValueMaxLength }),
      T.annotationsMaxProperties,
    ),
    formats: array(
      'Output formats written beside the three keys: CloudConf (key cloud.conf, the [Global] section of the OpenStack cloud controller manager and Cinder CSI) and Env (the OS_* keys openstackclient and Terraform read, for envFrom).',
      string({ description: 'CloudConf or Env.', maxLength: 16, enum: SECRET_FORMATS }),
      { maxItems: SECRET_FORMATS.length, listType: 'set' },
    ),
    data: stringMap(
      `Keys of your own, each value a template: text in which {{ field }} is replaced by a field of ${TEMPLATE_FIELDS.join(', ')}, and {{ opens nothing else. A rotation rewrites every key at once.`,
      string({ description: 'A template over the fields.', maxLength: T.dataValueMaxLength }),
      T.dataMaxProperties,
    ),
  },
);

/** `spec.adopt` (issue 49): bounds from `AdoptionLimits`, rules from `ADOPTION_RULES`. */
const adopt = object(
  "Not in the reference (an extension): adopt an existing application credential of the ordered user on the ordered project instead of minting the first one, proven by its secret (Keystone must authenticate the id with it; an unrestricted credential is refused). Read only while the order holds no credential; the next rotation supersedes it and sweeps it after the grace period.",
  {
    credentialID: string({ description: 'The Keystone id of the application credential to adopt (32 hexadecimal digits).', maxLength: AdoptionLimits.credentialIdLength }),
    secretRef: object(
      "The Secret in the order's namespace that holds the credential's secret.",
      {
        name: string({ description: "The Secret's name.", maxLength: AdoptionLimits.secretNameMaxLength }),
        key: string({ description: `The key holding the secret; default ${DEFAULT_ADOPT_SECRET_KEY}.`, maxLength: AdoptionLimits.secretKeyMaxLength }),
      },
      ['name'],
    ),
  },
  ['credentialID', 'secretRef'],
);

const spec = object(
  'KeystoneApplicationCredentialSpec: one Keystone application credential for a KeystoneUser on a KeystoneProject.',
  {
    controlPlaneRef: controlPlaneRefSchema(Limits.refNameMaxLength),
    userRef: localRef('The KeystoneUser in the order\'s namespace the credential belongs to. Immutable.', Limits.refNameMaxLength),
    projectRef: localRef('The KeystoneProject in the order\'s namespace the credential is scoped to. Immutable.', Limits.refNameMaxLength),
    credentialGeneration: int64(
      'The lowest credential generation the order must hold. Raising it above status.credentialGeneration rotates at once. It may only increase.',
      { minimum: Limits.credentialGenerationMinimum, default: DEFAULT_CREDENTIAL_GENERATION },
    ),
    rotation: object(
      'The rotation schedule.',
      {
        interval: durationField('The time between two scheduled rotations. 0s turns the schedule off; any other value is at least 1m. At most 87600h.', DEFAULT_INTERVAL),
        gracePeriod: durationField(
          'How long the superseded credential stays in Keystone after the delivered Secret switched. Not negative, and shorter than a non-zero interval.',
          DEFAULT_GRACE_PERIOD,
        ),
      },
      [],
      { default: {} },
    ),
    // Not the reference's (issue 42): optional, so c5c3's own manifests apply unchanged.
    roles: array(
      "Not in the reference (an extension): the names of the roles the credential carries, a subset of the roles KeystoneRoleAssignments of the namespace gave the user on the project, each in the namespace's allowedRoles. Left out: every role the user holds on the project. Keystone keeps a credential's roles immutable: a change rotates (a successor with the new roles; the superseded credential keeps its roles for the grace period).",
      string({ description: 'A role name.', maxLength: PrivilegeLimits.roleMaxLength }),
      { minItems: 1, maxItems: PrivilegeLimits.rolesMaxItems, listType: 'set' },
    ),
    accessRules: array(
      "Not in the reference (an extension): the only requests a token from the credential may make, enforced by keystonemiddleware's auth_token in each service (with its service_type set). Left out: every request the roles allow. A change rotates, as for roles.",
      object(
        'One access rule: a service type, an HTTP method and a path.',
        {
          service: string({ description: 'The service type as the catalog lists it (compute, object-store).', maxLength: PrivilegeLimits.serviceMaxLength }),
          method: string({ description: 'The HTTP method.', maxLength: 6, enum: ACCESS_RULE_METHODS }),
          path: string({ description: 'The request path, beginning with /; * matches one path segment, ** any number of segments.', maxLength: PrivilegeLimits.pathMaxLength }),
        },
        ['service', 'method', 'path'],
      ),
      { minItems: 1, maxItems: PrivilegeLimits.accessRulesMaxItems, listType: 'atomic' },
    ),
    // Not the reference's (issue 49): optional, so c5c3's own manifests apply unchanged.
    secretTemplate,
    deletionPolicy: string({
      description:
        'Not in the reference (an extension): Delete (the default, the reference\'s Deletion Semantics) or Retain: deleting the order keeps the delivered credential in Keystone, the delivered Secret (its owner reference removed) and its backup, deletes what is superseded and the order\'s other children, and records what it left, with the commands that remove it, in an Event.',
      maxLength: 6,
      enum: DELETION_POLICIES,
    }),
    adopt,
  },
  ['controlPlaneRef', 'userRef', 'projectRef'],
);

const status = object('KeystoneApplicationCredentialStatus.', {
  conditions: conditions('CredentialReady, DeliveryReady and the aggregate Ready.'),
  observedGeneration: int64('The metadata.generation the controller last reconciled.'),
  credentialID: string({ description: 'The Keystone id of the credential the delivered Secret carries.', minLength: 0, maxLength: 255 }),
  credentialGeneration: int64('The generation of that credential.'),
  credentialExpiresAt: time('When that credential expires in Keystone. Absent for one created with the schedule off.'),
  lastRotation: time('When that credential became the delivered one.'),
  nextRotation: time('When the schedule rotates next. Absent with the schedule off.'),
  previousCredentialID: string({ description: 'The Keystone id of the superseded credential, during its grace period only.', minLength: 0, maxLength: 255 }),
  previousCredentialGeneration: int64('Its generation, during its grace period only.'),
  previousCredentialDeleteAt: time('When it is deleted, during its grace period only.'),
  secretName: string({ description: 'The delivered Secret, once it carries the current credential.', minLength: 0, maxLength: 253 }),
  secretKeys: array('The delivered Secret\'s data keys, once it carries the current credential.', string({ description: 'A data key.', maxLength: 253 }), {
    maxItems: 32,
  }),
  backupPath: string({
    description:
      'Not in the reference: the OpenBao path (its mount first) the backup lives at alone, recorded once the path keystone-appcred 0.1.0 wrote holds nothing of the order\'s. Absent without a backup.',
    minLength: 0,
    maxLength: 1024,
  }),
  lastRevokeRequest: string({
    description: 'Not in the reference: the value of the c5c3.io/revoke-previous annotation the order last acted on; a different value rotates at once and deletes the superseded credential as soon as its successor is delivered and backed up.',
    minLength: 0,
    maxLength: REVOKE_REQUEST_MAX_LENGTH,
  }),
  revokeGeneration: int64(
    'Not in the reference: while a revoke request is carried out, the generation it rotates to; every credential below it is deleted as soon as one at or above it is delivered and backed up, skipping its grace period.',
  ),
  adoptedCredentialID: string({ description: 'Not in the reference: the Keystone id of the credential the order adopted (spec.adopt), while it holds it.', minLength: 0, maxLength: 255 }),
});

/** The KeystoneApplicationCredential kind's CRD definition. */
export const KEYSTONE_APPLICATION_CREDENTIAL: KindDefinition = {
  kind: KIND,
  listKind: LIST_KIND,
  plural: PLURAL,
  singular: KIND.toLowerCase(),
  shortNames: ['kappcred'],
  description:
    'KeystoneApplicationCredential orders one Keystone application credential for a KeystoneUser on a KeystoneProject, delivered as the Secret <metadata.name>-credentials beside the order and rotated on a schedule.',
  spec,
  status,
  rules: RULES,
  columns: [
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'ControlPlane', type: 'string', jsonPath: '.spec.controlPlaneRef.name' },
    { name: 'User', type: 'string', jsonPath: '.spec.userRef.name' },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name' },
    { name: 'Generation', type: 'integer', jsonPath: '.status.credentialGeneration' },
    // A string, not a date: a date column prints an age, and an age of a future time reads "<invalid>".
    { name: 'NextRotation', type: 'string', jsonPath: '.status.nextRotation' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
