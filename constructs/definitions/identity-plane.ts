/**
 * The CRDs of the four neighbour kinds (design: identity-plane.md), in the style of the KeystoneApplicationCredential's:
 * bounds from `PlaneLimits`, defaults from `PlaneDefaults`, rules from `PLANE_RULES`.
 */
import { PlaneDefaults, PlaneKinds, PlaneLimits, type PlaneKind } from '../../src/api/identity-plane';
import { PLANE_RULES } from '../../src/api/identity-plane-rules';
import type { KindDefinition, PrinterColumn } from './definition';
import { array, conditions, int64, localRef, object, string, time, type Schema } from '../schema';
import { controlPlaneRefSchema } from './keystone-application-credential';

const K = PlaneLimits.keystoneNameMaxLength;
const REF = PlaneLimits.refNameMaxLength;

const ready = (type: string): PrinterColumn => ({ name: 'Ready', type: 'string', jsonPath: `.status.conditions[?(@.type=='${type}')].status` });
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const controlPlaneColumn: PrinterColumn = { name: 'ControlPlane', type: 'string', jsonPath: '.spec.controlPlaneRef.name' };
const statusString = (description: string, maxLength = 255): Schema => string({ description, minLength: 0, maxLength });

function definition(kind: PlaneKind, rest: Omit<KindDefinition, 'kind' | 'listKind' | 'plural' | 'singular' | 'rules'>): KindDefinition {
  return { ...PlaneKinds[kind], ...rest, rules: PLANE_RULES[kind] };
}

const secretKeyRef = object(
  'A key of a Secret in the ControlPlane\'s namespace.',
  {
    name: string({ description: 'The Secret\'s name.', maxLength: PlaneLimits.secretNameMaxLength }),
    key: string({ description: 'The key.', maxLength: PlaneLimits.secretNameMaxLength, default: PlaneDefaults.caBundleKey }),
  },
  ['name'],
);

const url = (description: string): Schema => string({ description, maxLength: PlaneLimits.urlMaxLength });

/** ControlPlane: which Keystone, with what admin credential, for which namespaces. */
export const CONTROL_PLANE: KindDefinition = definition('ControlPlane', {
  description: 'ControlPlane names an existing Keystone, the admin credential the operator uses with it, and the namespaces that may order from it.',
  spec: object(
    'ControlPlaneSpec.',
    {
      region: string({ description: 'The Keystone region.', maxLength: K, default: PlaneDefaults.region }),
      services: object(
        'The services of the control plane.',
        {
          keystone: object(
            'The identity service.',
            {
              mode: string({ description: 'Only External (an existing Keystone) is supported.', maxLength: 32, default: PlaneDefaults.mode }),
              external: object(
                'An existing Keystone.',
                {
                  authURL: url('The http or https auth URL ending in /v3 the operator and orders on the management cluster use.'),
                  endpointType: string({ description: 'public or internal.', maxLength: 8, enum: ['public', 'internal'], default: PlaneDefaults.endpointType }),
                  caBundleSecretRef: secretKeyRef,
                },
                ['authURL'],
              ),
              publicEndpoint: url('The auth URL written into documents for orders on other clusters.'),
            },
            ['external'],
          ),
        },
        ['keystone'],
      ),
      adminCredential: object(
        'The admin credential, used only for users, projects and role assignments: exactly one of cloudCredentialsRef and identityRef.',
        {
          cloudCredentialsRef: object(
            'A Secret in the ControlPlane\'s namespace whose key clouds.yaml holds a password cloud or an application credential (auth_type v3applicationcredential) with admin rights.',
            {
              secretName: string({ description: 'The Secret\'s name.', maxLength: PlaneLimits.secretNameMaxLength }),
              cloudName: string({ description: 'The cloud in clouds.yaml.', maxLength: K, default: PlaneDefaults.cloudName }),
            },
            ['secretName'],
          ),
          identityRef: object(
            'A KeystoneClusterIdentity that allows this namespace; the operator mirrors its Secret here as keystone-creds-<name>.',
            { name: string({ description: 'The KeystoneClusterIdentity\'s name.', maxLength: REF }) },
            ['name'],
          ),
          domainName: string({ description: 'The domain users and projects are created in.', maxLength: K, default: PlaneDefaults.domainName }),
        },
      ),
      namespaceAssignments: array(
        'The consent for orders: one entry per namespace and cluster.',
        object(
          'One namespace assignment.',
          {
            namespace: string({ description: 'The namespace.', maxLength: REF }),
            targetClusterRef: object('The target cluster; absent for the management cluster.', { name: string({ description: 'The cluster.', maxLength: REF }) }, [
              'name',
            ]),
            allowedRoles: array('Role names a KeystoneRoleAssignment in the namespace may assign.', string({ description: 'A role name.', maxLength: K }), {
              listType: 'set',
              maxItems: PlaneLimits.allowedRolesMaxItems,
            }),
          },
          ['namespace'],
        ),
        { maxItems: PlaneLimits.namespaceAssignmentsMaxItems },
      ),
    },
    ['services', 'adminCredential'],
  ),
  status: object('ControlPlaneStatus.', {
    conditions: conditions('AdminCredentialReady and the aggregate Ready.'),
    observedGeneration: int64('The metadata.generation the controller last reconciled.'),
    keystoneVersion: statusString('The Keystone API version the auth URL reports.'),
    adminCredentialExpiresAt: time(
      'When the admin credential, an application credential, expires in Keystone. Absent for a password cloud or a credential without an expiry.',
    ),
  }),
  columns: [
    ready('Ready'),
    { name: 'Mode', type: 'string', jsonPath: '.spec.services.keystone.mode' },
    { name: 'AuthURL', type: 'string', jsonPath: '.spec.services.keystone.external.authURL' },
    { name: 'Keystone', type: 'string', jsonPath: '.status.keystoneVersion' },
    age,
  ],
});

/** KeystoneProject: a project in the ControlPlane's admin domain. */
export const KEYSTONE_PROJECT: KindDefinition = definition('KeystoneProject', {
  description: 'KeystoneProject orders a Keystone project in the ControlPlane\'s domain.',
  spec: object(
    'KeystoneProjectSpec.',
    {
      controlPlaneRef: controlPlaneRefSchema(REF),
      projectName: string({ description: 'The Keystone project name; defaults to metadata.name. Immutable.', maxLength: PlaneLimits.projectNameMaxLength }),
    },
    ['controlPlaneRef'],
  ),
  status: object('KeystoneProjectStatus.', {
    conditions: conditions('ProjectReady.'),
    observedGeneration: int64('The metadata.generation the controller last reconciled.'),
    projectID: statusString('The Keystone project id.'),
    projectName: statusString('The Keystone project name.'),
    domainName: statusString('The domain the project lives in.'),
  }),
  columns: [
    ready('ProjectReady'),
    controlPlaneColumn,
    { name: 'ProjectName', type: 'string', jsonPath: '.status.projectName' },
    { name: 'ProjectID', type: 'string', jsonPath: '.status.projectID', priority: 1 },
    age,
  ],
});

/** KeystoneUser: a user with a delivered password. */
export const KEYSTONE_USER: KindDefinition = definition('KeystoneUser', {
  description: 'KeystoneUser orders a Keystone user whose password is delivered as the Secret <metadata.name>-credentials beside the order.',
  spec: object(
    'KeystoneUserSpec.',
    {
      controlPlaneRef: controlPlaneRefSchema(REF),
      userName: string({ description: 'The Keystone user name; defaults to metadata.name. Immutable, no comma.', maxLength: K }),
      passwordGeneration: int64('The lowest password generation the user must hold; raising it rotates the password. It may only increase.', {
        minimum: PlaneLimits.passwordGenerationMinimum,
        default: PlaneDefaults.passwordGeneration,
      }),
    },
    ['controlPlaneRef'],
  ),
  status: object('KeystoneUserStatus.', {
    conditions: conditions('UserReady, DeliveryReady and the aggregate Ready.'),
    observedGeneration: int64('The metadata.generation the controller last reconciled.'),
    userID: statusString('The Keystone user id.'),
    passwordGeneration: int64('The password generation Keystone holds.'),
    lastPasswordRotation: time('When that password was set.'),
    secretName: statusString('The delivered Secret.', 253),
    secretKeys: array('The delivered Secret\'s data keys.', string({ description: 'A data key.', maxLength: 253 }), { maxItems: 8 }),
  }),
  columns: [
    ready('Ready'),
    controlPlaneColumn,
    { name: 'UserName', type: 'string', jsonPath: '.spec.userName' },
    { name: 'Generation', type: 'integer', jsonPath: '.status.passwordGeneration' },
    { name: 'UserID', type: 'string', jsonPath: '.status.userID', priority: 1 },
    age,
  ],
});

/** KeystoneRoleAssignment: a role for an ordered user on an ordered project. */
export const KEYSTONE_ROLE_ASSIGNMENT: KindDefinition = definition('KeystoneRoleAssignment', {
  description: 'KeystoneRoleAssignment assigns an ordered user a role on an ordered project, both in the order\'s namespace.',
  spec: object(
    'KeystoneRoleAssignmentSpec.',
    {
      controlPlaneRef: controlPlaneRefSchema(REF),
      userRef: localRef('The KeystoneUser in the order\'s namespace. Immutable.', REF),
      projectRef: localRef('The KeystoneProject in the order\'s namespace. Immutable.', REF),
      role: string({ description: 'The role name; must be in the namespace\'s allowedRoles. Immutable, no comma.', maxLength: K }),
    },
    ['controlPlaneRef', 'userRef', 'projectRef', 'role'],
  ),
  status: object('KeystoneRoleAssignmentStatus.', {
    conditions: conditions('AssignmentReady.'),
    observedGeneration: int64('The metadata.generation the controller last reconciled.'),
    roleID: statusString('The Keystone role id.'),
    userID: statusString('The Keystone user id.'),
    projectID: statusString('The Keystone project id.'),
  }),
  columns: [
    ready('AssignmentReady'),
    controlPlaneColumn,
    { name: 'User', type: 'string', jsonPath: '.spec.userRef.name' },
    { name: 'Project', type: 'string', jsonPath: '.spec.projectRef.name' },
    { name: 'Role', type: 'string', jsonPath: '.spec.role' },
    age,
  ],
});

/** The four neighbour kinds' definitions. */
export const IDENTITY_PLANE: readonly KindDefinition[] = [CONTROL_PLANE, KEYSTONE_PROJECT, KEYSTONE_USER, KEYSTONE_ROLE_ASSIGNMENT];
