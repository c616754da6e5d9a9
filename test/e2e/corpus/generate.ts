/**
 * Generates the admission corpus in this folder: for each kind, one valid base object, and from it one fixture per CRD
 * rule that breaks exactly that rule (an update fixture, old object then new, for every transition rule), fixtures for
 * the schema bounds the spec's Validation Summary lists, and the valid variants that must be accepted.
 *
 * Run `npm run corpus` to rewrite it; test/unit/constructs/corpus.test.ts fails when the files differ from what this
 * generates, and test/e2e/crds.test.ts sends each fixture to a real API server.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CLUSTER_IDENTITY_RULES } from '../../../src/api/cluster-identity-rules';
import { PLANE_RULES } from '../../../src/api/identity-plane-rules';
import type { PlaneKind } from '../../../src/api/identity-plane';
import { ADOPTION_RULES } from '../../../src/api/adoption';
import { RULES } from '../../../src/api/rules';
import { SECRET_TEMPLATE_RULES } from '../../../src/api/secret-template';
import { API_VERSION, KIND } from '../../../src/api/types';

/** The namespace every fixture object of a namespaced kind is created in (the KeystoneClusterIdentity has none). */
export const CORPUS_NAMESPACE = 'kac-corpus';

type Obj = Record<string, unknown>;

/**
 * What the API server must answer: a rejection carrying a CRD rule's message, or a substring of the API server's own
 * message for a schema bound (required, length, minimum, pattern, enum), or acceptance.
 */
export type Expectation = { readonly rejected: string; readonly by: 'rule' | 'schema' } | { readonly accepted: true };

/** One fixture as the index lists it. */
export interface FixtureEntry {
  /** Path from this folder. */
  readonly file: string;
  readonly kind: string;
  /** `create`: the one document is created. `update`: the first is created, the second replaces it. */
  readonly operation: 'create' | 'update';
  /** A rejection names the rule's message (for a rule) or a substring of the API server's schema message. */
  readonly expect: Expectation;
  /** What the fixture shows. */
  readonly description: string;
}

interface Fixture {
  readonly slug: string;
  readonly description: string;
  readonly expect: Expectation;
  /** Mutates a copy of the base into the object sent (create), or into the new object (update). */
  readonly change: (o: Obj) => void;
  /** For an update: mutates a copy of the base into the stored object first. */
  readonly before?: (o: Obj) => void;
}

type KindKey = 'KeystoneApplicationCredential' | PlaneKind | 'KeystoneClusterIdentity';

const SHORT: Record<KindKey, string> = {
  KeystoneApplicationCredential: 'appcred',
  ControlPlane: 'cp',
  KeystoneProject: 'project',
  KeystoneUser: 'user',
  KeystoneRoleAssignment: 'ra',
  KeystoneClusterIdentity: 'identity',
};

const cpRef = { name: 'cp', namespace: 'openstack' };

const BASES: Record<KindKey, Obj> = {
  KeystoneApplicationCredential: {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: 'workflow-appcred', namespace: CORPUS_NAMESPACE },
    spec: { controlPlaneRef: cpRef, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } },
  },
  ControlPlane: {
    apiVersion: API_VERSION,
    kind: 'ControlPlane',
    metadata: { name: 'cp', namespace: CORPUS_NAMESPACE },
    spec: {
      services: { keystone: { external: { authURL: 'https://keystone.example:5000/v3' } } },
      adminCredential: { cloudCredentialsRef: { secretName: 'keystone-admin' } },
      namespaceAssignments: [{ namespace: 'tenant-a', allowedRoles: ['member'] }],
    },
  },
  KeystoneProject: {
    apiVersion: API_VERSION,
    kind: 'KeystoneProject',
    metadata: { name: 'workflow-project', namespace: CORPUS_NAMESPACE },
    spec: { controlPlaneRef: cpRef },
  },
  KeystoneUser: {
    apiVersion: API_VERSION,
    kind: 'KeystoneUser',
    metadata: { name: 'workflow', namespace: CORPUS_NAMESPACE },
    spec: { controlPlaneRef: cpRef },
  },
  KeystoneRoleAssignment: {
    apiVersion: API_VERSION,
    kind: 'KeystoneRoleAssignment',
    metadata: { name: 'workflow-member', namespace: CORPUS_NAMESPACE },
    spec: { controlPlaneRef: cpRef, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' }, role: 'member' },
  },
  // Cluster-scoped: no namespace.
  KeystoneClusterIdentity: {
    apiVersion: API_VERSION,
    kind: 'KeystoneClusterIdentity',
    metadata: { name: 'keystone-admin' },
    spec: { secretRef: { name: 'keystone-admin', namespace: 'openstack' }, allowedNamespaces: { list: ['tenant-a'] } },
  },
};

/** Sets (or, for undefined, deletes) the value at a dotted path, creating objects on the way. */
function set(o: Obj, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = o;
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Obj;
  }
  const last = keys[keys.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
}

const rejected = (message: string, by: 'rule' | 'schema'): Expectation => ({ rejected: message, by });
const accepted: Expectation = { accepted: true };
const setting = (entries: Record<string, unknown>) => (o: Obj) => {
  for (const [path, value] of Object.entries(entries)) set(o, path, value);
};
const rule = (message: string, slug: string, entries: Record<string, unknown>, before?: Record<string, unknown>): Fixture => ({
  slug,
  description: `breaks "${message}"`,
  expect: rejected(message, 'rule'),
  change: setting(entries),
  before: before ? setting(before) : undefined,
});
/** A transition rule: the stored object is the base, the update changes it. */
const transition = (message: string, slug: string, entries: Record<string, unknown>, before?: Record<string, unknown>): Fixture =>
  rule(message, slug, entries, before ?? {});
const valid = (slug: string, description: string, entries: Record<string, unknown>, before?: Record<string, unknown>): Fixture => ({
  slug,
  description,
  expect: accepted,
  change: setting(entries),
  before: before ? setting(before) : undefined,
});
const schema = (slug: string, description: string, entries: Record<string, unknown>, substring: string): Fixture => ({
  slug,
  description,
  expect: rejected(substring, 'schema'),
  change: setting(entries),
});

const LONG_NAME = 'n'.repeat(64);
const dnsLabel = (field: string): string =>
  `${field} must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit`;
const NAMESPACE = 'spec.controlPlaneRef.namespace';
const NAMESPACE_IMMUTABLE = 'controlPlaneRef.namespace is immutable';
/**
 * The same on every order kind. `controlPlaneRef.namespace` may be left out (the order's own namespace); writing it out
 * later, or leaving it out after it was written, is a change even with the order's own namespace, because CRD rules
 * cannot read metadata.namespace.
 */
const controlPlaneRefFixtures = [
  transition('controlPlaneRef.name is immutable', 'controlplaneref-name-changed', { 'spec.controlPlaneRef.name': 'other-cp' }),
  transition(NAMESPACE_IMMUTABLE, 'controlplaneref-namespace-changed', { [NAMESPACE]: 'other-ns' }),
  transition(NAMESPACE_IMMUTABLE, 'controlplaneref-namespace-written-out', { [NAMESPACE]: 'other-ns' }, { [NAMESPACE]: undefined }),
  transition(NAMESPACE_IMMUTABLE, 'controlplaneref-namespace-written-out-as-own', { [NAMESPACE]: CORPUS_NAMESPACE }, { [NAMESPACE]: undefined }),
  transition(NAMESPACE_IMMUTABLE, 'controlplaneref-namespace-left-out', { [NAMESPACE]: undefined }),
  rule(dnsLabel('controlPlaneRef.namespace'), 'controlplaneref-namespace-not-dns-label', { [NAMESPACE]: 'Bad_NS' }),
  valid('controlplaneref-namespace-omitted', 'controlPlaneRef without a namespace (the order\'s own)', { [NAMESPACE]: undefined }),
  valid(
    'controlplaneref-namespace-omitted-updated',
    'an update of an order whose controlPlaneRef has no namespace',
    { [NAMESPACE]: undefined, 'metadata.labels': { 'c5c3.io/corpus': 'updated' } },
    { [NAMESPACE]: undefined },
  ),
];
const nameLength = rule('metadata.name must be at most 63 bytes', 'name-64-bytes', { 'metadata.name': LONG_NAME });
const ADMIN_CREDENTIAL_ONE =
  'adminCredential must set exactly one of cloudCredentialsRef (a Secret in the ControlPlane\'s namespace) and identityRef (a KeystoneClusterIdentity)';
const IDENTITY_REF = { name: 'keystone-admin' };
const LABEL_KEY = 'an optional DNS subdomain prefix of at most 253 characters and a slash, then a name of at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit';
const LABEL_VALUE = 'empty, or at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit';
const SELECTOR = 'spec.allowedNamespaces.selector';
const expression = (key: string, operator: string, values?: string[]): Record<string, unknown> => ({ key, operator, ...(values ? { values } : {}) });

const THINGS_GET = { service: 'things', method: 'GET', path: '/v1/things/*' };
const ADOPT_ID = '0123456789abcdef0123456789abcdef';
const ACCESS_RULE_SERVICE = 'accessRules[].service must be a service type of letters, digits and hyphens, as the catalog lists it (compute, object-store)';
const ACCESS_RULE_PATH =
  "accessRules[].path must begin with / and hold only path characters (letters, digits, - . _ ~ % ! & ' , ; = : @ /), the wildcards * (one segment) and ** (any segments), and {name} segments";

/** Every fixture, by kind. The rule fixtures of each kind must cover every rule of its table (checked below). */
const FIXTURES: Record<KindKey, readonly Fixture[]> = {
  KeystoneApplicationCredential: [
    transition('userRef is immutable', 'userref-changed', { 'spec.userRef.name': 'other-user' }),
    transition('projectRef is immutable', 'projectref-changed', { 'spec.projectRef.name': 'other-project' }),
    transition('credentialGeneration may only increase', 'credentialgeneration-decreased', { 'spec.credentialGeneration': 2 }, { 'spec.credentialGeneration': 3 }),
    rule('rotation.interval is 0s or at least 1m', 'interval-59s', { 'spec.rotation.interval': '59s', 'spec.rotation.gracePeriod': '0s' }),
    rule('rotation.interval is at most 87600h', 'interval-87601h', { 'spec.rotation.interval': '87601h' }),
    rule('rotation.gracePeriod is not negative', 'graceperiod-negative', { 'spec.rotation.gracePeriod': '-1s' }),
    rule('rotation.gracePeriod must be shorter than rotation.interval', 'graceperiod-equals-interval', {
      'spec.rotation.interval': '24h',
      'spec.rotation.gracePeriod': '24h',
    }),
    rule('rotation.gracePeriod must be shorter than rotation.interval', 'graceperiod-equals-defaulted-interval', { 'spec.rotation.gracePeriod': '720h' }),
    ...controlPlaneRefFixtures,
    nameLength,
    schema('userref-name-missing', 'userRef.name is required', { 'spec.userRef': {} }, 'spec.userRef.name: Required value'),
    schema('projectref-missing', 'projectRef is required', { 'spec.projectRef': undefined }, 'spec.projectRef: Required value'),
    schema('userref-name-empty', 'userRef.name is at least 1 character', { 'spec.userRef.name': '' }, 'spec.userRef.name'),
    schema('projectref-name-64', 'projectRef.name is at most 63 characters', { 'spec.projectRef.name': 'p'.repeat(64) }, 'spec.projectRef.name'),
    schema('credentialgeneration-0', 'credentialGeneration is at least 1', { 'spec.credentialGeneration': 0 }, 'spec.credentialGeneration'),
    schema('interval-not-a-duration', 'interval is a Go duration', { 'spec.rotation.interval': '1d' }, 'spec.rotation.interval'),
    valid('interval-0s', 'interval 0s turns the schedule off', { 'spec.rotation.interval': '0s' }),
    valid('interval-1m', 'interval 1m is the shortest schedule', { 'spec.rotation.interval': '1m', 'spec.rotation.gracePeriod': '30s' }),
    valid('interval-87600h', 'interval 87600h is the longest', { 'spec.rotation.interval': '87600h' }),
    valid('graceperiod-0s', 'grace period 0s', { 'spec.rotation.gracePeriod': '0s' }),
    valid('go-client-form', 'the form a Go client writes', { 'spec.rotation.interval': '720h0m0s', 'spec.rotation.gracePeriod': '24h0m0s' }),
    valid('name-63-bytes', 'a name of 63 bytes', { 'metadata.name': 'n'.repeat(63) }),
    valid('credentialgeneration-increased', 'credentialGeneration may increase', { 'spec.credentialGeneration': 2 }, {}),
    valid('rotation-changed', 'the schedule may change', { 'spec.rotation.interval': '168h' }, {}),
    // Not the reference's (issue 42): roles and access rules, optional extension fields; a change rotates.
    rule('roles entries must not contain a comma', 'roles-comma', { 'spec.roles': ['member', 'a,b'] }),
    rule('accessRules must not name the same service, method and path twice', 'accessrules-duplicate', {
      'spec.accessRules': [THINGS_GET, { ...THINGS_GET, method: 'DELETE' }, THINGS_GET],
    }),
    rule(ACCESS_RULE_SERVICE, 'accessrule-service-space', { 'spec.accessRules': [{ ...THINGS_GET, service: 'object store' }] }),
    rule(ACCESS_RULE_PATH, 'accessrule-path-relative', { 'spec.accessRules': [{ ...THINGS_GET, path: 'v1/things' }] }),
    rule(ACCESS_RULE_PATH, 'accessrule-path-regex', { 'spec.accessRules': [{ ...THINGS_GET, path: '/v1/(things)+' }] }),
    rule('accessRules[].path must not hold *** (* is one segment, ** any number of segments)', 'accessrule-path-three-stars', {
      'spec.accessRules': [{ ...THINGS_GET, path: '/v1/***' }],
    }),
    schema('roles-empty', 'roles has at least 1 item (leave it out for every role)', { 'spec.roles': [] }, 'spec.roles'),
    schema('roles-duplicate', 'roles are unique', { 'spec.roles': ['member', 'member'] }, 'Duplicate value'),
    schema('roles-256', 'a role name is at most 255 characters', { 'spec.roles': ['r'.repeat(256)] }, 'spec.roles[0]'),
    schema('accessrules-empty', 'accessRules has at least 1 item (leave it out for none)', { 'spec.accessRules': [] }, 'spec.accessRules'),
    schema('accessrule-method-unknown', 'the method is one of Keystone\'s six', { 'spec.accessRules': [{ ...THINGS_GET, method: 'OPTIONS' }] }, 'spec.accessRules[0].method'),
    schema('accessrule-path-missing', 'an access rule needs a path', { 'spec.accessRules': [{ service: 'things', method: 'GET' }] }, 'spec.accessRules[0].path: Required value'),
    schema('accessrule-service-65', 'a service type is at most 64 characters', { 'spec.accessRules': [{ ...THINGS_GET, service: 's'.repeat(65) }] }, 'spec.accessRules[0].service'),
    schema('accessrule-path-226', 'a path is at most 225 characters', { 'spec.accessRules': [{ ...THINGS_GET, path: `/${'p'.repeat(225)}` }] }, 'spec.accessRules[0].path'),
    valid('roles-and-accessrules', 'a role subset and access rules with wildcards and a {name} segment', {
      'spec.roles': ['member', 'reader'],
      'spec.accessRules': [THINGS_GET, { service: 'object-store', method: 'PUT', path: '/v1/AUTH_{project_id}/backups/**' }, { service: 'compute', method: 'GET', path: '/v2.1/servers' }],
    }),
    valid('roles-changed', 'roles may change (a rotation)', { 'spec.roles': ['reader'] }, { 'spec.roles': ['member'] }),
    valid('accessrules-changed', 'accessRules may change (a rotation)', { 'spec.accessRules': [{ ...THINGS_GET, method: 'HEAD' }] }, { 'spec.accessRules': [THINGS_GET] }),
    valid('accessrules-removed', 'accessRules may be removed (a rotation)', { 'spec.accessRules': undefined }, { 'spec.accessRules': [THINGS_GET] }),
    // Not the reference's (issue 49): the delivered Secret's template, the deletion policy, the adoption.
    rule(SECRET_TEMPLATE_RULES[0].message, 'template-label-key-invalid', { 'spec.secretTemplate.labels': { '-team': 'a' } }),
    rule(SECRET_TEMPLATE_RULES[1].message, 'template-label-value-invalid', { 'spec.secretTemplate.labels': { team: 'a b' } }),
    rule(SECRET_TEMPLATE_RULES[2].message, 'template-label-operators', { 'spec.secretTemplate.labels': { 'c5c3.io/keystoneapplicationcredential-name': 'other' } }),
    rule(SECRET_TEMPLATE_RULES[3].message, 'template-annotation-key-invalid', { 'spec.secretTemplate.annotations': { 'a b': 'x' } }),
    rule(SECRET_TEMPLATE_RULES[4].message, 'template-annotation-operators', { 'spec.secretTemplate.annotations': { 'c5c3.io/keystoneapplicationcredential-template': 'x' } }),
    rule(SECRET_TEMPLATE_RULES[5].message, 'template-data-key-invalid', { 'spec.secretTemplate.data': { 'creds/id': '{{ applicationCredentialID }}' } }),
    rule(SECRET_TEMPLATE_RULES[6].message, 'template-data-key-reserved', { 'spec.secretTemplate.data': { 'clouds.yaml': 'x' } }),
    rule(SECRET_TEMPLATE_RULES[6].message, 'template-data-key-env', { 'spec.secretTemplate.data': { OS_AUTH_URL: '{{ authURL }}' } }),
    rule(SECRET_TEMPLATE_RULES[7].message, 'template-data-unknown-field', { 'spec.secretTemplate.data': { password: '{{ password }}' } }),
    rule(SECRET_TEMPLATE_RULES[7].message, 'template-data-go-template', { 'spec.secretTemplate.data': { home: '{{ .Env.HOME }}' } }),
    rule(SECRET_TEMPLATE_RULES[7].message, 'template-data-open-placeholder', { 'spec.secretTemplate.data': { x: 'prefix {{ authURL' } }),
    schema('template-format-unknown', 'a format is CloudConf or Env', { 'spec.secretTemplate.formats': ['Ini'] }, 'spec.secretTemplate.formats[0]'),
    schema('template-format-duplicate', 'formats are a set', { 'spec.secretTemplate.formats': ['Env', 'Env'] }, 'Duplicate value'),
    schema('template-data-empty-value', 'a template value is at least 1 character', { 'spec.secretTemplate.data': { x: '' } }, 'spec.secretTemplate.data.x'),
    schema('template-data-4097', 'a template value is at most 4096 characters', { 'spec.secretTemplate.data': { x: 'x'.repeat(4097) } }, 'spec.secretTemplate.data.x'),
    schema('template-data-17-keys', 'at most 16 keys of your own', { 'spec.secretTemplate.data': Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'x'])) }, 'spec.secretTemplate.data'),
    schema('template-label-value-64', 'a label value is at most 63 characters', { 'spec.secretTemplate.labels': { team: 't'.repeat(64) } }, 'spec.secretTemplate.labels.team'),
    valid('template-full', 'labels, annotations, both formats and keys of your own over the closed set of fields', {
      'spec.secretTemplate': {
        labels: { 'velero.io/exclude-from-backup': 'false', team: 'platform' },
        annotations: { 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true', note: 'any text {{ at all }}' },
        formats: ['CloudConf', 'Env'],
        data: {
          'openrc.sh': 'export OS_AUTH_URL={{ authURL }}\nexport OS_APPLICATION_CREDENTIAL_ID={{applicationCredentialID}}\nexport OS_APPLICATION_CREDENTIAL_SECRET={{ applicationCredentialSecret }}\n',
          'project.json': '{"id": "{{ projectID }}", "name": "{{ projectName }}", "domain": "{{ projectDomainName }}", "user": "{{ userID }}", "region": "{{ region }}", "interface": "{{ interface }}"}',
        },
      },
    }),
    valid('template-changed', 'the template may change (the Secret is rewritten)', { 'spec.secretTemplate': { formats: ['Env'] } }, { 'spec.secretTemplate': { formats: ['CloudConf'] } }),
    valid('template-removed', 'the template may be removed (its keys leave the Secret)', { 'spec.secretTemplate': undefined }, { 'spec.secretTemplate': { formats: ['CloudConf'] } }),
    schema('deletionpolicy-unknown', 'deletionPolicy is Delete or Retain', { 'spec.deletionPolicy': 'Orphan' }, 'spec.deletionPolicy'),
    valid('deletionpolicy-retain', 'deletionPolicy Retain', { 'spec.deletionPolicy': 'Retain' }),
    valid('deletionpolicy-changed', 'deletionPolicy may change', { 'spec.deletionPolicy': 'Retain' }, { 'spec.deletionPolicy': 'Delete' }),
    rule(ADOPTION_RULES[0].message, 'adopt-id-not-keystone', { 'spec.adopt': { credentialID: 'My-Credential', secretRef: { name: 'legacy' } } }),
    rule(ADOPTION_RULES[1].message, 'adopt-secret-name-invalid', { 'spec.adopt': { credentialID: ADOPT_ID, secretRef: { name: 'Legacy_Secret' } } }),
    rule(ADOPTION_RULES[2].message, 'adopt-secret-key-invalid', { 'spec.adopt': { credentialID: ADOPT_ID, secretRef: { name: 'legacy', key: 'a/b' } } }),
    schema('adopt-secretref-missing', 'adopt needs the Secret holding the secret', { 'spec.adopt': { credentialID: ADOPT_ID } }, 'spec.adopt.secretRef: Required value'),
    schema('adopt-id-missing', 'adopt needs the credential id', { 'spec.adopt': { secretRef: { name: 'legacy' } } }, 'spec.adopt.credentialID: Required value'),
    valid('adopt', 'adopt a credential by id, its secret in a Secret of the order\'s namespace', { 'spec.adopt': { credentialID: ADOPT_ID, secretRef: { name: 'legacy-appcred', key: 'secret' } } }),
    valid('adopt-removed', 'adopt may be removed once the credential is adopted', { 'spec.adopt': undefined }, { 'spec.adopt': { credentialID: ADOPT_ID, secretRef: { name: 'legacy' } } }),
  ],
  ControlPlane: [
    rule('services.keystone.mode must be External: only an existing Keystone is supported', 'mode-managed', { 'spec.services.keystone.mode': 'Managed' }),
    rule('services.keystone.external.authURL must be an http or https URL ending in /v3', 'authurl-not-v3', {
      'spec.services.keystone.external.authURL': 'https://keystone.example:5000/identity',
    }),
    rule('services.keystone.publicEndpoint must be an http or https URL ending in /v3', 'publicendpoint-ftp', {
      'spec.services.keystone.publicEndpoint': 'ftp://keystone.example/v3',
    }),
    rule('namespaceAssignments must not assign the same namespace on the same cluster twice', 'duplicate-assignment', {
      'spec.namespaceAssignments': [{ namespace: 'tenant-a' }, { namespace: 'tenant-a', allowedRoles: ['reader'] }],
    }),
    rule(dnsLabel('namespaceAssignments[].namespace'), 'assignment-namespace-not-dns-label', {
      'spec.namespaceAssignments': [{ namespace: 'tenant-a' }, { namespace: 'Tenant_A', allowedRoles: ['member'] }],
    }),
    rule('allowedRoles entries must not contain a comma', 'allowedrole-comma', { 'spec.namespaceAssignments': [{ namespace: 'tenant-a', allowedRoles: ['a,b'] }] }),
    schema('endpointtype-unknown', 'endpointType is public or internal', { 'spec.services.keystone.external.endpointType': 'admin' }, 'spec.services.keystone.external.endpointType'),
    valid('same-namespace-two-clusters', 'one namespace on two clusters', {
      'spec.namespaceAssignments': [{ namespace: 'tenant-a' }, { namespace: 'tenant-a', targetClusterRef: { name: 'edge-1' } }],
    }),
    valid('publicendpoint', 'a public endpoint', { 'spec.services.keystone.publicEndpoint': 'https://keystone.example.com/v3' }),
    rule(ADMIN_CREDENTIAL_ONE, 'admincredential-both', { 'spec.adminCredential.identityRef': IDENTITY_REF }),
    rule(ADMIN_CREDENTIAL_ONE, 'admincredential-neither', { 'spec.adminCredential.cloudCredentialsRef': undefined }),
    schema(
      'identityref-name-missing',
      'identityRef.name is required',
      { 'spec.adminCredential.cloudCredentialsRef': undefined, 'spec.adminCredential.identityRef': {} },
      'spec.adminCredential.identityRef.name: Required value',
    ),
    valid('admincredential-identityref', 'the admin credential from a KeystoneClusterIdentity', {
      'spec.adminCredential.cloudCredentialsRef': undefined,
      'spec.adminCredential.identityRef': IDENTITY_REF,
    }),
    valid(
      'admincredential-switched-to-identityref',
      'switching from cloudCredentialsRef to identityRef',
      { 'spec.adminCredential.cloudCredentialsRef': undefined, 'spec.adminCredential.identityRef': IDENTITY_REF },
      {},
    ),
  ],
  KeystoneProject: [
    ...controlPlaneRefFixtures,
    transition('projectName is immutable', 'projectname-changed', { 'spec.projectName': 'b' }, { 'spec.projectName': 'a' }),
    transition('projectName is immutable', 'projectname-added', { 'spec.projectName': 'other' }),
    rule('projectName must not contain a comma', 'projectname-comma', { 'spec.projectName': 'a,b' }),
    nameLength,
    schema('projectname-65', 'projectName is at most 64 characters', { 'spec.projectName': 'p'.repeat(65) }, 'spec.projectName'),
    {
      slug: 'projectname-added-as-name',
      description: 'projectName set to the name it defaulted to',
      expect: accepted,
      change: (o) => set(o, 'spec.projectName', (o.metadata as Obj).name),
      before: () => undefined,
    },
  ],
  KeystoneUser: [
    ...controlPlaneRefFixtures,
    transition('userName is immutable', 'username-changed', { 'spec.userName': 'b' }, { 'spec.userName': 'a' }),
    rule('userName must not contain a comma', 'username-comma', { 'spec.userName': 'a,b' }),
    transition('passwordGeneration may only increase', 'passwordgeneration-decreased', { 'spec.passwordGeneration': 1 }, { 'spec.passwordGeneration': 2 }),
    nameLength,
    valid('passwordgeneration-increased', 'passwordGeneration may increase', { 'spec.passwordGeneration': 2 }, {}),
  ],
  KeystoneRoleAssignment: [
    ...controlPlaneRefFixtures,
    transition('userRef is immutable', 'userref-changed', { 'spec.userRef.name': 'other-user' }),
    transition('projectRef is immutable', 'projectref-changed', { 'spec.projectRef.name': 'other-project' }),
    transition('role is immutable', 'role-changed', { 'spec.role': 'reader' }),
    rule('role must not contain a comma', 'role-comma', { 'spec.role': 'a,b' }),
    nameLength,
    schema('role-missing', 'role is required', { 'spec.role': undefined }, 'spec.role: Required value'),
  ],
  KeystoneClusterIdentity: [
    rule(
      'secretRef.name must be a DNS subdomain: at most 253 lowercase letters, digits, hyphens or dots, each dot-separated part beginning and ending with a letter or digit',
      'secretref-name-not-dns-subdomain',
      { 'spec.secretRef.name': 'Keystone_Admin' },
    ),
    rule(dnsLabel('secretRef.namespace'), 'secretref-namespace-not-dns-label', { 'spec.secretRef.namespace': 'Open_Stack' }),
    rule(
      'allowedNamespaces must set list, selector or both: write selector: {} to allow every namespace, or leave allowedNamespaces out to allow none',
      'allowednamespaces-empty',
      { 'spec.allowedNamespaces': {} },
    ),
    rule(dnsLabel('allowedNamespaces.list[]'), 'list-item-not-dns-label', { 'spec.allowedNamespaces.list': ['tenant-a', 'Tenant_B'] }),
    rule(`selector.matchLabels keys must be label keys: ${LABEL_KEY}`, 'matchlabels-key-invalid', { [`${SELECTOR}.matchLabels`]: { '-team': 'a' } }),
    rule(`selector.matchLabels values must be label values: ${LABEL_VALUE}`, 'matchlabels-value-invalid', { [`${SELECTOR}.matchLabels`]: { team: 'a b' } }),
    rule(`selector.matchExpressions[].key must be a label key: ${LABEL_KEY}`, 'matchexpression-key-invalid', {
      [`${SELECTOR}.matchExpressions`]: [expression('Bad Key', 'Exists')],
    }),
    rule('selector.matchExpressions[].values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist', 'matchexpression-in-without-values', {
      [`${SELECTOR}.matchExpressions`]: [expression('environment', 'In')],
    }),
    rule('selector.matchExpressions[].values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist', 'matchexpression-exists-with-values', {
      [`${SELECTOR}.matchExpressions`]: [expression('environment', 'Exists', ['staging'])],
    }),
    rule(`selector.matchExpressions[].values entries must be label values: ${LABEL_VALUE}`, 'matchexpression-value-invalid', {
      [`${SELECTOR}.matchExpressions`]: [expression('environment', 'NotIn', ['-staging'])],
    }),
    nameLength,
    schema('secretref-missing', 'secretRef is required', { 'spec.secretRef': undefined }, 'spec.secretRef: Required value'),
    schema('secretref-namespace-missing', 'secretRef.namespace is required: never defaulted', { 'spec.secretRef.namespace': undefined }, 'spec.secretRef.namespace: Required value'),
    schema('secretref-name-254', 'secretRef.name is at most 253 characters', { 'spec.secretRef.name': 's'.repeat(254) }, 'spec.secretRef.name'),
    schema('list-empty', 'list has at least 1 item', { 'spec.allowedNamespaces.list': [] }, 'spec.allowedNamespaces.list'),
    schema('list-101', 'list has at most 100 items', { 'spec.allowedNamespaces.list': Array.from({ length: 101 }, (_, i) => `ns-${i}`) }, 'spec.allowedNamespaces.list'),
    schema('list-duplicate', 'list items are unique', { 'spec.allowedNamespaces.list': ['tenant-a', 'tenant-a'] }, 'Duplicate value'),
    schema('operator-unknown', 'the operator is In, NotIn, Exists or DoesNotExist', { [`${SELECTOR}.matchExpressions`]: [expression('a', 'Equals', ['b'])] }, `${SELECTOR}.matchExpressions[0].operator`),
    valid('allowednamespaces-unset', 'no allowedNamespaces: no namespace is allowed', { 'spec.allowedNamespaces': undefined }),
    valid('selector-empty', 'selector: {} allows every namespace', { 'spec.allowedNamespaces': { selector: {} } }),
    valid('list-and-selector', 'list and selector: the union', {
      'spec.allowedNamespaces': {
        list: ['tenant-a', 'tenant-b'],
        selector: {
          matchLabels: { 'c5c3.io/keystone-admin': 'true', empty: '' },
          matchExpressions: [expression('environment', 'In', ['staging', 'production']), expression('team', 'NotIn', ['']), expression('owner', 'Exists'), expression('frozen', 'DoesNotExist', [])],
        },
      },
    }),
    valid('list-100', 'a list of 100 namespaces', { 'spec.allowedNamespaces.list': Array.from({ length: 100 }, (_, i) => `ns-${i}`) }),
    valid('cloudname', 'another cloud of clouds.yaml', { 'spec.cloudName': 'ops' }),
    valid('name-63-bytes', 'a name of 63 bytes', { 'metadata.name': 'n'.repeat(63) }),
    valid('secretref-changed', 'secretRef is mutable', { 'spec.secretRef': { name: 'keystone-admin-2', namespace: 'keystone-appcred-system' } }, {}),
    valid('allowednamespaces-changed', 'allowedNamespaces is mutable', { 'spec.allowedNamespaces': { selector: { matchLabels: { team: 'a' } } } }, {}),
  ],
};

const RULE_TABLES: Record<KindKey, readonly { message: string }[]> = { KeystoneApplicationCredential: RULES, ...PLANE_RULES, KeystoneClusterIdentity: CLUSTER_IDENTITY_RULES };

const HEADER = '# GENERATED by test/e2e/corpus/generate.ts from the kind\'s base object: do not edit, run `npm run corpus`.\n';

/** The corpus: file path (relative to this folder) → content. */
export function generateCorpus(): Map<string, string> {
  const files = new Map<string, string>();
  const index: FixtureEntry[] = [];
  for (const kind of Object.keys(FIXTURES) as KindKey[]) {
    const fixtures = FIXTURES[kind];
    const covered = new Set(fixtures.flatMap((f) => ('rejected' in f.expect && f.expect.by === 'rule' ? [f.expect.rejected] : [])));
    const missing = RULE_TABLES[kind].filter((r) => !covered.has(r.message));
    if (missing.length > 0) throw new Error(`${kind}: no fixture for ${missing.map((r) => JSON.stringify(r.message)).join(', ')}`);
    const dir = kind.toLowerCase();
    const base = BASES[kind];
    files.set(`${dir}/base.yaml`, `${HEADER}# The valid base every fixture of ${kind} is derived from.\n${stringify(base)}`);
    fixtures.forEach((fixture, i) => {
      const file = `${dir}/${String(i + 1).padStart(2, '0')}-${fixture.slug}.yaml`;
      const named = (mutate: (o: Obj) => void): Obj => {
        const copy = structuredClone(base);
        set(copy, 'metadata.name', `${SHORT[kind]}-${fixture.slug}`.slice(0, 63));
        mutate(copy);
        return copy;
      };
      const next = named(fixture.change);
      const operation = fixture.before ? 'update' : 'create';
      const docs = fixture.before ? [named(fixture.before), next] : [next];
      const expectText = 'rejected' in fixture.expect ? `rejected with "${fixture.expect.rejected}"` : 'accepted';
      const comment = `# ${fixture.description}.\n# ${operation === 'update' ? 'Create the first document, then replace it with the second' : 'Create it'}: ${expectText}.\n`;
      files.set(file, `${HEADER}${comment}${docs.map((d) => stringify(d)).join('---\n')}`);
      index.push({ file, kind, operation, expect: fixture.expect, description: fixture.description });
    });
  }
  files.set('index.json', `${JSON.stringify(index, null, 2)}\n`);
  return files;
}

/** Rewrites the corpus folder's generated files. */
export function writeCorpus(dir: string = __dirname): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) rmSync(join(dir, entry.name), { recursive: true });
  }
  for (const [file, content] of generateCorpus()) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
}

if (require.main === module) writeCorpus();
