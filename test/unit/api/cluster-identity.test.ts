import {
  adminCredentialSecretName,
  identityAllows,
  isCurrentMirror,
  isLabelKey,
  isLabelValue,
  labelSelectorMatches,
  mirrorSecretName,
  MIRRORED_LABEL,
  SOURCE_HASH_ANNOTATION,
  sourceHash,
  validateClusterIdentity,
  validatePlane,
  type AllowedNamespaces,
  type LabelSelector,
} from '../../../src/api';

const allows = (allowedNamespaces: AllowedNamespaces | undefined, namespace: string, ...labels: [Record<string, string> | undefined] | []): boolean =>
  identityAllows({ spec: allowedNamespaces === undefined ? {} : { allowedNamespaces } }, namespace, labels.length === 0 ? {} : labels[0]);

describe('identityAllows (terraformclusteridentity.md, Allowed namespaces)', () => {
  it('allows no namespace when allowedNamespaces is unset', () => {
    expect(allows(undefined, 'tenant-a', { team: 'a' })).toBe(false);
  });

  it('allows exactly the listed namespaces with list only', () => {
    expect(allows({ list: ['tenant-a', 'tenant-b'] }, 'tenant-a')).toBe(true);
    expect(allows({ list: ['tenant-a', 'tenant-b'] }, 'tenant-c')).toBe(false);
  });

  it('allows every namespace with selector: {}', () => {
    expect(allows({ selector: {} }, 'anything')).toBe(true);
    expect(allows({ selector: { matchLabels: {}, matchExpressions: [] } }, 'anything', { a: 'b' })).toBe(true);
  });

  it('allows the namespaces whose labels match with selector only', () => {
    const selector: LabelSelector = { matchLabels: { 'c5c3.io/identity-admin': 'true' } };
    expect(allows({ selector }, 'tenant-a', { 'c5c3.io/identity-admin': 'true' })).toBe(true);
    expect(allows({ selector }, 'tenant-a', { 'c5c3.io/identity-admin': 'false' })).toBe(false);
    expect(allows({ selector }, 'tenant-a', {})).toBe(false);
  });

  it('allows the union of list and selector', () => {
    const allowed: AllowedNamespaces = { list: ['tenant-a'], selector: { matchLabels: { team: 'b' } } };
    expect(allows(allowed, 'tenant-a')).toBe(true);
    expect(allows(allowed, 'tenant-b', { team: 'b' })).toBe(true);
    expect(allows(allowed, 'tenant-c', { team: 'c' })).toBe(false);
  });

  it('denies a namespace that does not exist (no labels), even when listed', () => {
    expect(allows({ list: ['tenant-a'] }, 'tenant-a', undefined)).toBe(false);
    expect(allows({ selector: {} }, 'tenant-a', undefined)).toBe(false);
  });

  it('lets an invalid selector match nothing, while the list still allows', () => {
    const invalid = { matchExpressions: [{ key: 'team', operator: 'NotIn', values: [] }] } as LabelSelector;
    expect(allows({ selector: invalid }, 'tenant-a', {})).toBe(false);
    expect(allows({ list: ['tenant-a'], selector: invalid }, 'tenant-a', {})).toBe(true);
    expect(allows({ selector: { matchExpressions: [{ key: 'bad key', operator: 'DoesNotExist' }] } }, 'tenant-a', {})).toBe(false);
    expect(allows({ selector: { matchExpressions: [{ key: 'a', operator: 'Equals' as 'In', values: ['b'] }] } }, 'tenant-a', { a: 'b' })).toBe(false);
  });
});

describe('labelSelectorMatches', () => {
  const labels = { environment: 'staging', team: 'a', owner: '' };
  it.each<[string, LabelSelector, boolean]>([
    ['In, value listed', { matchExpressions: [{ key: 'environment', operator: 'In', values: ['staging', 'production'] }] }, true],
    ['In, value not listed', { matchExpressions: [{ key: 'environment', operator: 'In', values: ['production'] }] }, false],
    ['In, label absent', { matchExpressions: [{ key: 'region', operator: 'In', values: ['a'] }] }, false],
    ['NotIn, value not listed', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['b'] }] }, true],
    ['NotIn, value listed', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] }, false],
    ['NotIn, label absent', { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists, present with an empty value', { matchExpressions: [{ key: 'owner', operator: 'Exists' }] }, true],
    ['Exists, absent', { matchExpressions: [{ key: 'region', operator: 'Exists' }] }, false],
    ['DoesNotExist, absent', { matchExpressions: [{ key: 'region', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist, present', { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, false],
    ['matchLabels and matchExpressions both hold', { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'owner', operator: 'Exists' }] }, true],
    ['matchLabels holds, an expression does not', { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'region', operator: 'Exists' }] }, false],
  ])('%s: %p', (_case, selector, matches) => {
    expect(labelSelectorMatches(selector, labels)).toBe(matches);
  });

  it('does not read inherited properties as labels', () => {
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {})).toBe(false);
  });
});

describe('label key and value syntax', () => {
  it.each(['team', 'c5c3.io/identity', 'a', 'a.b_c-d', `${'p'.repeat(253)}/n`, 'A1'])('accepts the key %p', (key) => expect(isLabelKey(key)).toBe(true));
  it.each(['', '-team', 'team-', 'bad key', 'a/b/c', '/name', 'Prefix.IO/name', `${'p'.repeat(254)}/n`, 'n'.repeat(64)])('refuses the key %p', (key) =>
    expect(isLabelKey(key)).toBe(false),
  );
  it.each(['', 'true', 'a.b_c-d', 'v'.repeat(63)])('accepts the value %p', (value) => expect(isLabelValue(value)).toBe(true));
  it.each(['-a', 'a b', 'v'.repeat(64), 'a/b'])('refuses the value %p', (value) => expect(isLabelValue(value)).toBe(false));
});

describe('the mirror', () => {
  it('is named keystone-creds-<identity>', () => {
    expect(mirrorSecretName('keystone-admin')).toBe('keystone-creds-keystone-admin');
  });

  it('carries a source hash that depends on the data, not on key order', () => {
    const hash = sourceHash({ 'clouds.yaml': 'a', extra: 'b' });
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sourceHash({ extra: 'b', 'clouds.yaml': 'a' })).toBe(hash);
    expect(sourceHash({ 'clouds.yaml': 'a', extra: 'c' })).not.toBe(hash);
    expect(sourceHash({ 'clouds.yaml': 'a' })).not.toBe(hash);
  });

  it('is current when labelled mirrored and annotated with the source hash', () => {
    const hash = sourceHash({ 'clouds.yaml': 'a' });
    expect(isCurrentMirror({ labels: { [MIRRORED_LABEL]: 'true' }, annotations: { [SOURCE_HASH_ANNOTATION]: hash } }, hash)).toBe(true);
    expect(isCurrentMirror({ labels: { [MIRRORED_LABEL]: 'true' }, annotations: { [SOURCE_HASH_ANNOTATION]: 'old' } }, hash)).toBe(false);
    expect(isCurrentMirror({ annotations: { [SOURCE_HASH_ANNOTATION]: hash } }, hash)).toBe(false);
  });

  it('is the Secret a ControlPlane with identityRef reads its admin clouds.yaml from', () => {
    expect(adminCredentialSecretName({ identityRef: { name: 'keystone-admin' } })).toBe('keystone-creds-keystone-admin');
    expect(adminCredentialSecretName({ cloudCredentialsRef: { secretName: 'admin' } })).toBe('admin');
    expect(() => adminCredentialSecretName({})).toThrow('adminCredential sets neither cloudCredentialsRef nor identityRef');
  });
});

describe('validateClusterIdentity', () => {
  const identity = (spec: Record<string, unknown>, name = 'keystone-admin'): unknown => ({ metadata: { name }, spec: { secretRef: { name: 'keystone-admin', namespace: 'openstack' }, ...spec } });
  const messages = (object: unknown): string[] => validateClusterIdentity(object).map((v) => v.message);

  it('accepts the reference\'s full example and the unset allowedNamespaces', () => {
    expect(messages(identity({ allowedNamespaces: { list: ['team-a', 'team-b'], selector: { matchLabels: { 'captf.io/identity-aws': 'true' } } } }))).toEqual([]);
    expect(messages(identity({}))).toEqual([]);
  });

  it('refuses {} with the hint to write selector: {}', () => {
    expect(messages(identity({ allowedNamespaces: {} }))).toEqual([
      'spec.allowedNamespaces ({}): allowedNamespaces must set list, selector or both: write selector: {} to allow every namespace, or leave allowedNamespaces out to allow none',
    ]);
  });

  it('requires secretRef with both halves, never defaulting the namespace', () => {
    expect(messages({ metadata: { name: 'x' }, spec: {} })).toEqual(['spec.secretRef: is required']);
    expect(messages({ metadata: { name: 'x' } })).toEqual(['spec: is required']);
    expect(messages({ metadata: { name: 'x' }, spec: { secretRef: { name: 'a' } } })).toEqual(['spec.secretRef.namespace: is required']);
  });

  it('names the field, the value and the rule of every list and selector violation', () => {
    expect(
      messages(
        identity({
          allowedNamespaces: {
            list: ['tenant-a', 'Tenant_B'],
            selector: { matchLabels: { '-team': 'a b' }, matchExpressions: [{ key: 'env', operator: 'Exists', values: ['x'] }, { key: 'env', operator: 'In', values: ['-x'] }] },
          },
        }),
      ),
    ).toEqual([
      'spec.allowedNamespaces.list[1] ("Tenant_B"): allowedNamespaces.list[] must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit',
      'spec.allowedNamespaces.selector.matchLabels ({"-team":"a b"}): selector.matchLabels keys must be label keys: an optional DNS subdomain prefix of at most 253 characters and a slash, then a name of at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit',
      'spec.allowedNamespaces.selector.matchLabels ({"-team":"a b"}): selector.matchLabels values must be label values: empty, or at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit',
      'spec.allowedNamespaces.selector.matchExpressions[0] ({"key":"env","operator":"Exists","values":["x"]}): selector.matchExpressions[].values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
      'spec.allowedNamespaces.selector.matchExpressions[1].values[0] ("-x"): selector.matchExpressions[].values entries must be label values: empty, or at most 63 letters, digits, hyphens, underscores or dots, beginning and ending with a letter or digit',
    ]);
  });

  it('checks the schema bounds: list size and uniqueness, operator, lengths', () => {
    expect(messages(identity({ allowedNamespaces: { list: Array.from({ length: 101 }, (_, i) => `n${i}`) } }))[0]).toMatch(/^spec\.allowedNamespaces\.list \(\[.*\]\): must have at most 100 items$/);
    expect(messages(identity({ allowedNamespaces: { selector: { matchExpressions: [{ key: 'a', operator: 'Equals', values: ['b'] }] } } }))).toEqual([
      'spec.allowedNamespaces.selector.matchExpressions[0].operator ("Equals"): must be one of In, NotIn, Exists, DoesNotExist',
    ]);
    expect(messages(identity({ secretRef: { name: 's'.repeat(254), namespace: 'openstack' } }))).toEqual([`spec.secretRef.name ("${'s'.repeat(254)}"): must be at most 253 characters long`]);
    expect(messages(identity({ allowedNamespaces: { selector: { matchLabels: { team: 'v'.repeat(64) } } } }))[0]).toBe(`spec.allowedNamespaces.selector.matchLabels.team ("${'v'.repeat(64)}"): must be at most 63 characters long`);
    expect(messages(identity({ cloudName: '' }))).toEqual(['spec.cloudName (""): must be at least 1 character long']);
  });

  it('refuses a name over 63 bytes and a secretRef.name that is no DNS subdomain', () => {
    expect(messages(identity({}, 'k'.repeat(64)))).toEqual([`metadata.name ("${'k'.repeat(64)}"): metadata.name must be at most 63 bytes`]);
    expect(messages(identity({ secretRef: { name: 'a..b', namespace: 'openstack' } }))).toEqual([
      'spec.secretRef.name ("a..b"): secretRef.name must be a DNS subdomain: at most 253 lowercase letters, digits, hyphens or dots, each dot-separated part beginning and ending with a letter or digit',
    ]);
  });
});

describe('ControlPlane spec.adminCredential', () => {
  const controlPlane = (adminCredential: Record<string, unknown>): unknown => ({
    metadata: { name: 'cp' },
    spec: { services: { keystone: { external: { authURL: 'https://keystone.example/v3' } } }, adminCredential },
  });
  const RULE = 'adminCredential must set exactly one of cloudCredentialsRef (a Secret in the ControlPlane\'s namespace) and identityRef (a KeystoneClusterIdentity)';

  it('takes cloudCredentialsRef or identityRef', () => {
    expect(validatePlane('ControlPlane', controlPlane({ cloudCredentialsRef: { secretName: 'admin' } }))).toEqual([]);
    expect(validatePlane('ControlPlane', controlPlane({ identityRef: { name: 'keystone-admin' } }))).toEqual([]);
  });

  it('refuses both and neither, naming the field and value', () => {
    expect(validatePlane('ControlPlane', controlPlane({ cloudCredentialsRef: { secretName: 'admin' }, identityRef: { name: 'x' } })).map((v) => v.rule)).toEqual([RULE]);
    expect(validatePlane('ControlPlane', controlPlane({ domainName: 'Default' })).map((v) => v.message)).toEqual([`spec.adminCredential ({"domainName":"Default"}): ${RULE}`]);
  });

  it('requires identityRef.name and bounds it like every reference', () => {
    expect(validatePlane('ControlPlane', controlPlane({ identityRef: {} })).map((v) => v.message)).toEqual(['spec.adminCredential.identityRef.name: is required']);
    expect(validatePlane('ControlPlane', controlPlane({ identityRef: { name: 'i'.repeat(64) } })).map((v) => v.rule)).toEqual(['must be at most 63 characters long']);
  });
});
