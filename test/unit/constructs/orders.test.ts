import { Chart, Testing } from 'cdk8s';
import { Duration } from '../../../constructs/duration';
import type { LabelSelector } from '../../../constructs/label-selector';
import { ControlPlane } from '../../../constructs/orders/control-plane';
import {
  AccessRuleMethod,
  DeletionPolicy,
  KeystoneApplicationCredential,
  SecretFormat,
  type AccessRule,
  type KeystoneApplicationCredentialProps,
} from '../../../constructs/orders/keystone-application-credential';
import { KeystoneProject } from '../../../constructs/orders/keystone-project';
import { KeystoneRoleAssignment } from '../../../constructs/orders/keystone-role-assignment';
import { KeystoneUser } from '../../../constructs/orders/keystone-user';
import { ServiceOwner } from '../../../constructs/orders/service-owner';
import { KeystoneClusterIdentity, type KeystoneClusterIdentityProps } from '../../../constructs/orders/keystone-cluster-identity';

type Json = Record<string, unknown>;
const cp = { name: 'cp', namespace: 'openstack' };

function appcred(props: Partial<KeystoneApplicationCredentialProps> = {}, name = 'workflow-appcred'): Json {
  const chart = Testing.chart();
  new KeystoneApplicationCredential(chart, 'appcred', {
    metadata: { name, namespace: 'tenant-a' },
    controlPlaneRef: cp,
    userRef: { name: 'workflow' },
    projectRef: { name: 'workflow-project' },
    ...props,
  });
  return (Testing.synth(chart) as Json[])[0];
}

describe('KeystoneApplicationCredential', () => {
  it('emits the spec example, leaving defaults to the API server', () => {
    expect(appcred()).toEqual({
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: 'workflow-appcred', namespace: 'tenant-a' },
      spec: { controlPlaneRef: cp, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } },
    });
  });

  it('writes a string duration as given and a Duration in Go form', () => {
    const spec = appcred({ credentialGeneration: 3, rotation: { interval: Duration.parse('720h'), gracePeriod: '90m' } }).spec as Json;
    expect(spec).toMatchObject({ credentialGeneration: 3, rotation: { interval: '720h0m0s', gracePeriod: '90m' } });
  });

  it.each([
    [{ rotation: { interval: '30s' } }, 'spec.rotation.interval ("30s"): rotation.interval is 0s or at least 1m'],
    [{ rotation: { interval: '87601h' } }, 'spec.rotation.interval ("87601h"): rotation.interval is at most 87600h'],
    [{ rotation: { gracePeriod: '-1s' } }, 'spec.rotation.gracePeriod ("-1s"): rotation.gracePeriod is not negative'],
    [{ rotation: { interval: '1h', gracePeriod: '1h' } }, 'rotation.gracePeriod must be shorter than rotation.interval'],
    [{ rotation: { interval: '1d' } }, 'spec.rotation.interval ("1d"): is not a duration'],
    [{ credentialGeneration: 0 }, 'spec.credentialGeneration (0): must be at least 1'],
    [{ userRef: { name: '' } }, 'spec.userRef.name (""): must be at least 1 character long'],
  ] as [Partial<KeystoneApplicationCredentialProps>, string][])('fails synth for %j with the CRD rule message', (props, message) => {
    expect(() => appcred(props)).toThrow(message);
    expect(() => appcred(props)).toThrow('[test/appcred] KeystoneApplicationCredential workflow-appcred: ');
  });

  it('leaves controlPlaneRef.namespace out when it is not given: it means the order\'s own namespace', () => {
    expect(appcred({ controlPlaneRef: { name: 'cp' } }).spec).toEqual({ controlPlaneRef: { name: 'cp' }, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } });
  });

  it('fails synth for a controlPlaneRef.namespace that is not a DNS label', () => {
    expect(() => appcred({ controlPlaneRef: { name: 'cp', namespace: 'Bad_NS' } })).toThrow(
      'KeystoneApplicationCredential workflow-appcred: spec.controlPlaneRef.namespace ("Bad_NS"): controlPlaneRef.namespace must be a DNS label',
    );
  });

  it('fails synth for a name over 63 bytes', () => {
    expect(() => appcred({}, 'a'.repeat(64))).toThrow('metadata.name must be at most 63 bytes');
  });

  it('accepts the valid variants', () => {
    for (const rotation of [{ interval: '0s', gracePeriod: '48h' }, { interval: '1m', gracePeriod: '0s' }, { interval: '87600h' }, { interval: '720h0m0s' }]) {
      expect(() => appcred({ rotation })).not.toThrow();
    }
  });

  it('emits secretTemplate, deletionPolicy and adopt (extension fields, issue 49) and checks them with the CRD rules at synth', () => {
    const secretTemplate = { labels: { team: 'a' }, annotations: { note: 'n' }, formats: [SecretFormat.CLOUD_CONF, SecretFormat.ENV], data: { 'id.txt': '{{ applicationCredentialID }}' } };
    const adopt = { credentialID: '0123456789abcdef0123456789abcdef', secretRef: { name: 'legacy' } };
    expect(appcred({ secretTemplate, deletionPolicy: DeletionPolicy.RETAIN, adopt }).spec).toMatchObject({
      secretTemplate: { labels: { team: 'a' }, annotations: { note: 'n' }, formats: ['CloudConf', 'Env'], data: { 'id.txt': '{{ applicationCredentialID }}' } },
      deletionPolicy: 'Retain',
      adopt: { credentialID: adopt.credentialID, secretRef: { name: 'legacy' } },
    });
    expect(() => appcred({ secretTemplate: { data: { x: '{{ password }}' } } })).toThrow('spec.secretTemplate.data ({"x":"{{ password }}"}): secretTemplate.data values may hold {{ field }} only');
    expect(() => appcred({ secretTemplate: { labels: { 'c5c3.io/keystoneapplicationcredential-name': 'x' } } })).toThrow("must not set a label of the operator's");
    expect(() => appcred({ adopt: { ...adopt, credentialID: 'nope' } })).toThrow('adopt.credentialID must be a Keystone application credential id');
  });

  it('emits roles and accessRules (extension fields, issue 42) and checks them with the CRD rules at synth', () => {
    const rule: AccessRule = { service: 'object-store', method: AccessRuleMethod.GET, path: '/v1/AUTH_*/backups/**' };
    expect(appcred({ roles: ['reader'], accessRules: [rule] }).spec).toMatchObject({ roles: ['reader'], accessRules: [rule] });
    expect(() => appcred({ roles: ['reader', 'reader'] })).toThrow('spec.roles (["reader","reader"]): must not contain duplicates');
    expect(() => appcred({ accessRules: [{ ...rule, path: '/v1/(x)' }] })).toThrow('spec.accessRules[0].path ("/v1/(x)"): accessRules[].path must begin with /');
  });
});

describe('the neighbour orders', () => {
  it('validate with the CRD rules of src/api', () => {
    const chart = Testing.chart();
    new KeystoneUser(chart, 'user', { metadata: { name: 'u', namespace: 'n' }, controlPlaneRef: cp, userName: 'a,b' });
    new KeystoneRoleAssignment(chart, 'ra', { metadata: { name: 'ra', namespace: 'n' }, controlPlaneRef: cp, userRef: { name: 'u' }, projectRef: { name: 'p' }, role: 'x,y' });
    new KeystoneProject(chart, 'project', { metadata: { name: 'p', namespace: 'n' }, controlPlaneRef: cp, projectName: 'p'.repeat(65) });
    new ControlPlane(chart, 'cp', {
      metadata: { name: 'cp', namespace: 'openstack' },
      keystone: { authURL: 'https://keystone.example/identity' },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
      namespaceAssignments: [{ namespace: 'n' }, { namespace: 'n' }],
    });
    let message = '';
    try {
      Testing.synth(chart);
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain('[test/user] KeystoneUser u: spec.userName ("a,b"): userName must not contain a comma');
    expect(message).toContain('[test/ra] KeystoneRoleAssignment ra: spec.role ("x,y"): role must not contain a comma');
    expect(message).toContain('spec.projectName');
    expect(message).toContain('must be at most 64 characters long');
    expect(message).toContain('services.keystone.external.authURL must be an http or https URL ending in /v3');
    expect(message).toContain('namespaceAssignments must not assign the same namespace on the same cluster twice');
  });

  it('leave controlPlaneRef.namespace out when it is not given: it means the order\'s own namespace', () => {
    const chart = Testing.chart();
    new ServiceOwner(chart, 'workflow', { namespace: 'openstack', controlPlaneRef: { name: 'cp' }, name: 'workflow' });
    const objects = Testing.synth(chart) as Json[];
    expect(objects.map((o) => [o.kind, (o.spec as Json).controlPlaneRef])).toEqual([
      ['KeystoneProject', { name: 'cp' }],
      ['KeystoneUser', { name: 'cp' }],
      ['KeystoneRoleAssignment', { name: 'cp' }],
      ['KeystoneApplicationCredential', { name: 'cp' }],
    ]);
  });

  it('fail synth for a namespace that is not a DNS label, and for a project name with a comma', () => {
    const chart = Testing.chart();
    new KeystoneProject(chart, 'project', { metadata: { name: 'p', namespace: 'n' }, controlPlaneRef: { name: 'cp', namespace: 'Tenant_A' }, projectName: 'a,b' });
    new ControlPlane(chart, 'cp', {
      metadata: { name: 'cp', namespace: 'openstack' },
      keystone: { authURL: 'https://keystone.example/v3' },
      adminCredential: { cloudCredentialsRef: { secretName: 'admin' } },
      namespaceAssignments: [{ namespace: 'Bad_NS' }],
    });
    expect(() => Testing.synth(chart)).toThrow(
      [
        'Validation failed with the following errors:',
        '  [test/project] KeystoneProject p: spec.controlPlaneRef.namespace ("Tenant_A"): controlPlaneRef.namespace must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit',
        '  [test/project] KeystoneProject p: spec.projectName ("a,b"): projectName must not contain a comma',
        '  [test/cp] ControlPlane cp: spec.namespaceAssignments[0].namespace ("Bad_NS"): namespaceAssignments[].namespace must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit',
      ].join('\n'),
    );
  });

  it('ServiceOwner orders project, user, role assignment and credential in one namespace', () => {
    const chart = Testing.chart();
    const owner = new ServiceOwner(chart, 'workflow', { namespace: 'tenant-a', controlPlaneRef: cp, name: 'workflow', rotation: { interval: '168h' } });
    const objects = Testing.synth(chart) as Json[];
    expect(objects.map((o) => [o.kind, (o.metadata as Json).name, (o.metadata as Json).namespace])).toEqual([
      ['KeystoneProject', 'workflow-project', 'tenant-a'],
      ['KeystoneUser', 'workflow', 'tenant-a'],
      ['KeystoneRoleAssignment', 'workflow-role', 'tenant-a'],
      ['KeystoneApplicationCredential', 'workflow-appcred', 'tenant-a'],
    ]);
    expect(objects[2].spec).toMatchObject({ role: 'member', userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } });
    expect(objects[3].spec).toMatchObject({ rotation: { interval: '168h' } });
    expect(owner.applicationCredential.secretName).toBe('workflow-appcred-credentials');
    expect(owner.user.secretName).toBe('workflow-credentials');
  });
});

describe('KeystoneClusterIdentity', () => {
  const props: KeystoneClusterIdentityProps = {
    metadata: { name: 'keystone-admin' },
    secretRef: { name: 'keystone-admin', namespace: 'openstack' },
    allowedNamespaces: { list: ['tenant-a'] },
  };
  const synth = (overrides: Partial<KeystoneClusterIdentityProps> = {}): Json[] => {
    const chart = Testing.chart();
    new KeystoneClusterIdentity(chart, 'identity', { ...props, ...overrides });
    return Testing.synth(chart) as Json[];
  };

  it('emits the identity without a namespace, leaving cloudName to the schema default', () => {
    expect(synth()).toEqual([
      {
        apiVersion: 'c5c3.io/v1alpha1',
        kind: 'KeystoneClusterIdentity',
        metadata: { name: 'keystone-admin' },
        spec: { secretRef: { name: 'keystone-admin', namespace: 'openstack' }, allowedNamespaces: { list: ['tenant-a'] } },
      },
    ]);
  });

  it('does not take the chart\'s namespace: the kind is cluster-scoped', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'namespaced', { namespace: 'openstack' });
    const identity = new KeystoneClusterIdentity(chart, 'identity', props);
    new ControlPlane(chart, 'cp', { metadata: { name: 'cp' }, keystone: { authURL: 'https://keystone.example/v3' }, adminCredential: { identityRef: identity.ref } });
    const objects = Testing.synth(chart) as Json[];
    expect(objects.map((o) => [o.kind, o.metadata])).toEqual([
      ['KeystoneClusterIdentity', { name: 'keystone-admin' }],
      ['ControlPlane', { name: 'cp', namespace: 'openstack' }],
    ]);
    expect((objects[1].spec as Json).adminCredential).toEqual({ identityRef: { name: 'keystone-admin' } });
  });

  it('writes a selector with only the given fields, and cloudName when given', () => {
    const selector = { matchLabels: { 'c5c3.io/keystone-admin': 'true' }, matchExpressions: [{ key: 'environment', operator: 'In' as const, values: ['staging'] }, { key: 'frozen', operator: 'DoesNotExist' as const }] };
    expect(synth({ cloudName: 'ops', allowedNamespaces: { selector } })[0].spec).toEqual({
      secretRef: { name: 'keystone-admin', namespace: 'openstack' },
      cloudName: 'ops',
      allowedNamespaces: { selector },
    });
    expect(synth({ allowedNamespaces: { selector: {} } })[0].spec).toMatchObject({ allowedNamespaces: { selector: {} } });
  });

  it('takes the library\'s own LabelSelector, metav1\'s shape: an operator Kubernetes does not know fails the synth naming the field', () => {
    const selector: LabelSelector = { matchExpressions: [{ key: 'environment', operator: 'NotIn', values: ['production'] }] };
    expect(synth({ allowedNamespaces: { selector } })[0].spec).toMatchObject({ allowedNamespaces: { selector } });
    const unknown: LabelSelector = { matchExpressions: [{ key: 'environment', operator: 'Within', values: ['staging'] }] };
    expect(() => synth({ allowedNamespaces: { selector: unknown } })).toThrow(
      'spec.allowedNamespaces.selector.matchExpressions[0].operator ("Within"): must be one of In, NotIn, Exists, DoesNotExist',
    );
  });

  it.each([
    [{ allowedNamespaces: {} }, 'spec.allowedNamespaces ({}): allowedNamespaces must set list, selector or both: write selector: {} to allow every namespace'],
    [{ secretRef: { name: 'Keystone_Admin', namespace: 'openstack' } }, 'spec.secretRef.name ("Keystone_Admin"): secretRef.name must be a DNS subdomain'],
    [{ secretRef: { name: 'keystone-admin', namespace: '' } }, 'spec.secretRef.namespace (""): must be at least 1 character long'],
    [{ allowedNamespaces: { list: [] } }, 'spec.allowedNamespaces.list ([]): must have at least 1 item'],
    [{ allowedNamespaces: { list: ['a', 'a'] } }, 'spec.allowedNamespaces.list (["a","a"]): must not contain duplicates'],
    [{ allowedNamespaces: { selector: { matchExpressions: [{ key: 'env', operator: 'In' as const }] } } }, 'spec.allowedNamespaces.selector.matchExpressions[0] ({"key":"env","operator":"In"}): selector.matchExpressions[].values must be non-empty for In and NotIn'],
    [{ metadata: { name: 'keystone-admin', namespace: 'openstack' } }, 'metadata.namespace ("openstack"): must be left out: KeystoneClusterIdentity is cluster-scoped'],
    [{ metadata: { name: 'k'.repeat(64) } }, 'metadata.name must be at most 63 bytes'],
  ] as [Partial<KeystoneClusterIdentityProps>, string][])('fails synth for %j with the rule message', (overrides, message) => {
    expect(() => synth(overrides)).toThrow(message);
    expect(() => synth(overrides)).toThrow('[test/identity] KeystoneClusterIdentity ');
  });
});

describe('ControlPlane adminCredential', () => {
  const controlPlane = (adminCredential: Json): (() => Json[]) => () => {
    const chart = Testing.chart();
    new ControlPlane(chart, 'cp', {
      metadata: { name: 'cp', namespace: 'openstack' },
      keystone: { authURL: 'https://keystone.example/v3' },
      adminCredential: adminCredential as never,
    });
    return Testing.synth(chart) as Json[];
  };

  it('takes identityRef instead of cloudCredentialsRef', () => {
    expect((controlPlane({ identityRef: { name: 'keystone-admin' }, domainName: 'Tenants' })()[0].spec as Json).adminCredential).toEqual({
      identityRef: { name: 'keystone-admin' },
      domainName: 'Tenants',
    });
  });

  it.each([
    ['both', { cloudCredentialsRef: { secretName: 'admin' }, identityRef: { name: 'keystone-admin' } }],
    ['neither', { domainName: 'Default' }],
  ])('fails synth for %s, naming the field and value, with the CRD rule message', (_case, adminCredential) => {
    expect(controlPlane(adminCredential)).toThrow(
      `[test/cp] ControlPlane cp: spec.adminCredential (${JSON.stringify(adminCredential)}): adminCredential must set exactly one of cloudCredentialsRef (a Secret in the ControlPlane's namespace) and identityRef (a KeystoneClusterIdentity)`,
    );
  });
});
