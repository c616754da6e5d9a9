import { ADOPTION_RULES, RULES, SECRET_TEMPLATE_RULES, validate, withSchemaDefaults, type OrderInput } from '../../../src/api';

const CONTROL_PLANE_NAMESPACE_DNS_LABEL =
  'controlPlaneRef.namespace must be a DNS label: at most 63 lowercase letters, digits or hyphens, beginning and ending with a letter or digit';

const base: OrderInput = {
  metadata: { name: 'workflow-appcred' },
  spec: { controlPlaneRef: { name: 'cp', namespace: 'openstack' }, userRef: { name: 'workflow' }, projectRef: { name: 'workflow-project' } },
};
const withSpec = (spec: object, name = 'workflow-appcred'): OrderInput => ({ metadata: { name }, spec: { ...base.spec, ...spec } });
const rules = (order: OrderInput, old?: OrderInput) => validate(order, old).map((v) => v.rule);

describe('validation with no API server in front', () => {
  it('accepts the spec example and fills in the schema defaults as the API server stores them', () => {
    expect(validate(base)).toEqual([]);
    expect(withSchemaDefaults(base).spec).toMatchObject({ credentialGeneration: 1, rotation: { interval: '720h', gracePeriod: '24h' } });
  });

  it.each(['0s', '1m', '87600h', '720h0m0s', '1h30m'])('accepts interval %s', (interval) => {
    expect(validate(withSpec({ rotation: { interval, gracePeriod: '0s' } }))).toEqual([]);
  });

  it.each([
    [{ rotation: { interval: '30s', gracePeriod: '10s' } }, 'rotation.interval is 0s or at least 1m'],
    [{ rotation: { interval: '87601h' } }, 'rotation.interval is at most 87600h'],
    [{ rotation: { gracePeriod: '-1s' } }, 'rotation.gracePeriod is not negative'],
    [{ rotation: { interval: '24h', gracePeriod: '36h' } }, 'rotation.gracePeriod must be shorter than rotation.interval'],
    [{ rotation: { interval: '24h', gracePeriod: '24h' } }, 'rotation.gracePeriod must be shorter than rotation.interval'],
    [{ rotation: { gracePeriod: '1000h' } }, 'rotation.gracePeriod must be shorter than rotation.interval'],
    [{ credentialGeneration: 0 }, 'must be at least 1'],
    [{ credentialGeneration: 1.5 }, 'must be an integer'],
    [{ userRef: { name: '' } }, 'must be at least 1 character long'],
    [{ projectRef: { name: 'p'.repeat(64) } }, 'must be at most 63 characters long'],
    [{ userRef: undefined }, 'is required'],
    [{ rotation: { interval: '5d' } }, 'is not a duration: unknown unit "d" (use ns, us, ms, s, m, h)'],
  ])('rejects %j: %s', (spec, rule) => {
    expect(rules(withSpec(spec))).toEqual([rule]);
  });

  it('names the field, the value and the rule', () => {
    const [v] = validate(withSpec({ rotation: { interval: '24h', gracePeriod: '36h' } }));
    expect(v.field).toBe('spec.rotation');
    expect(v.message).toContain('rotation.gracePeriod must be shorter than rotation.interval');
    const [w] = validate(withSpec({ rotation: { interval: '30s', gracePeriod: '0s' } }));
    expect(w).toMatchObject({ field: 'spec.rotation.interval', value: '30s' });
    expect(w.message).toBe('spec.rotation.interval ("30s"): rotation.interval is 0s or at least 1m');
  });

  it('a grace period may be anything non-negative when the schedule is off', () => {
    expect(validate(withSpec({ rotation: { interval: '0s', gracePeriod: '1000h' } }))).toEqual([]);
  });

  it('metadata.name is at most 63 bytes', () => {
    expect(rules(withSpec({}, 'n'.repeat(64)))).toEqual(['metadata.name must be at most 63 bytes']);
    expect(rules(withSpec({}, 'n'.repeat(63)))).toEqual([]);
  });

  it('returns every violation at once', () => {
    expect(rules(withSpec({ credentialGeneration: 0, rotation: { interval: '30s', gracePeriod: '-1s' } }))).toEqual([
      'must be at least 1',
      'rotation.interval is 0s or at least 1m',
      'rotation.gracePeriod is not negative',
    ]);
  });

  it.each([
    [{ userRef: { name: 'other' } }, 'userRef is immutable'],
    [{ projectRef: { name: 'other' } }, 'projectRef is immutable'],
    [{ controlPlaneRef: { name: 'cp2', namespace: 'openstack' } }, 'controlPlaneRef.name is immutable'],
    [{ controlPlaneRef: { name: 'cp', namespace: 'other' } }, 'controlPlaneRef.namespace is immutable'],
    [{ credentialGeneration: 1 }, 'credentialGeneration may only increase'],
  ])('transition rule: %j → %s', (change, rule) => {
    const old = withSpec({ credentialGeneration: 2 });
    expect(rules(withSpec({ credentialGeneration: 2, ...change }), old)).toEqual([rule]);
  });

  it('raising credentialGeneration is allowed', () => {
    expect(validate(withSpec({ credentialGeneration: 5 }), withSpec({ credentialGeneration: 2 }))).toEqual([]);
  });

  describe('controlPlaneRef.namespace (identity-plane.md, References)', () => {
    const ref = (namespace?: string): OrderInput => withSpec({ controlPlaneRef: namespace === undefined ? { name: 'cp' } : { name: 'cp', namespace } });

    it('may be left out: it means the order\'s own namespace', () => {
      expect(validate(ref())).toEqual([]);
      expect(validate(ref(), ref())).toEqual([]);
    });

    it.each(['Bad_NS', 'Tenant_A', '-tenant', 'tenant-', 'tenant.a'])('rejects %p, which is not a DNS label, naming the field and the value', (namespace) => {
      expect(validate(ref(namespace))).toEqual([
        {
          field: 'spec.controlPlaneRef.namespace',
          value: namespace,
          rule: CONTROL_PLANE_NAMESPACE_DNS_LABEL,
          message: `spec.controlPlaneRef.namespace (${JSON.stringify(namespace)}): ${CONTROL_PLANE_NAMESPACE_DNS_LABEL}`,
        },
      ]);
    });

    it('is immutable when it was left out and is written out later', () => {
      expect(rules(ref('other'), ref())).toEqual(['controlPlaneRef.namespace is immutable']);
      const [v] = validate(ref('other'), ref());
      expect(v.message).toBe('spec.controlPlaneRef.namespace ("other"): controlPlaneRef.namespace is immutable');
    });

    it('is immutable when it was written out and is left out later', () => {
      expect(validate(ref(), ref('openstack')).map((v) => v.message)).toEqual(['spec.controlPlaneRef.namespace: controlPlaneRef.namespace is immutable']);
    });
  });

  it('shows an absent value as no value, not as "undefined"', () => {
    expect(validate(withSpec({ userRef: {} })).map((v) => v.message)).toEqual(['spec.userRef.name: is required']);
  });

  it('every rule has a CEL expression and the message the spec quotes', () => {
    expect(RULES.map((r) => r.message)).toEqual([
      'userRef is immutable',
      'projectRef is immutable',
      'credentialGeneration may only increase',
      'rotation.interval is 0s or at least 1m',
      'rotation.interval is at most 87600h',
      'rotation.gracePeriod is not negative',
      'rotation.gracePeriod must be shorter than rotation.interval',
      'controlPlaneRef.name is immutable',
      'controlPlaneRef.namespace is immutable',
      CONTROL_PLANE_NAMESPACE_DNS_LABEL,
      // Not the reference's (issue 42): the extension fields roles and accessRules.
      'roles entries must not contain a comma',
      'accessRules must not name the same service, method and path twice',
      'accessRules[].service must be a service type of letters, digits and hyphens, as the catalog lists it (compute, object-store)',
      "accessRules[].path must begin with / and hold only path characters (letters, digits, - . _ ~ % ! & ' , ; = : @ /), the wildcards * (one segment) and ** (any segments), and {name} segments",
      'accessRules[].path must not hold *** (* is one segment, ** any number of segments)',
      // Not the reference's (issue 49): the delivered Secret's template and the adoption of an existing credential.
      ...SECRET_TEMPLATE_RULES.map((r) => r.message),
      ...ADOPTION_RULES.map((r) => r.message),
      'metadata.name must be at most 63 bytes',
    ]);
    for (const rule of RULES) expect(rule.cel.includes('oldSelf')).toBe(rule.transition);
  });

  it('settings scope checks only what a Pulumi resource carries', () => {
    expect(validate({ spec: { credentialGeneration: 0, rotation: { interval: '30s' } } }, undefined, 'settings').map((v) => v.field)).toEqual([
      'spec.credentialGeneration',
      'spec.rotation.interval',
      'spec.rotation', // the default 24h grace is not shorter than 30s either, as the API server would also say
    ]);
  });

  describe('secretTemplate, deletionPolicy and adopt (issue 49: extension fields beyond the reference)', () => {
    const messages = (spec: object, scope: 'order' | 'settings' = 'order') => validate(withSpec(spec), undefined, scope).map((v) => v.message);
    const ID = '0123456789abcdef0123456789abcdef';

    it('accepts labels, annotations, both formats, free keys over the closed fields, Retain and an adoption', () => {
      expect(
        messages({
          secretTemplate: {
            labels: { 'velero.io/backup': 'true', team: '' },
            annotations: { 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true' },
            formats: ['CloudConf', 'Env'],
            data: { 'endpoint.txt': '{{ authURL }}', 'openrc.sh': 'export OS_AUTH_URL={{authURL}}\nexport ID={{ applicationCredentialID }} # {a} {'},
          },
          deletionPolicy: 'Retain',
          adopt: { credentialID: ID, secretRef: { name: 'legacy-appcred', key: 'secret' } },
        }),
      ).toEqual([]);
    });

    it('refuses a template that renders nothing valid, naming the field and the rule', () => {
      expect(messages({ secretTemplate: { data: { x: '{{ password }}' } } })).toEqual([
        `spec.secretTemplate.data ({"x":"{{ password }}"}): ${SECRET_TEMPLATE_RULES[7].message}`,
      ]);
      expect(messages({ secretTemplate: { data: { x: '{{{ authURL }}' } } })).toHaveLength(1);
      expect(messages({ secretTemplate: { data: { 'clouds.yaml': 'x' } } })[0]).toContain('must not name a key the operator writes itself');
      expect(messages({ secretTemplate: { data: { 'a/b': 'x' } } })[0]).toContain('keys must be Secret keys');
      expect(messages({ secretTemplate: { labels: { 'c5c3.io/keystoneapplicationcredential-name': 'x' } } })[0]).toContain("must not set a label of the operator's");
      expect(messages({ secretTemplate: { annotations: { 'c5c3.io/keystoneapplicationcredential-template': 'x' } } })[0]).toContain("must not set an annotation of the operator's");
      expect(messages({ secretTemplate: { labels: { team: 'a b' } } })[0]).toContain('values must be label values');
      expect(messages({ secretTemplate: { formats: ['Ini'] } })).toEqual(['spec.secretTemplate.formats[0] ("Ini"): must be one of CloudConf, Env']);
      expect(messages({ secretTemplate: { formats: ['Env', 'Env'] } })).toEqual(['spec.secretTemplate.formats (["Env","Env"]): must not contain duplicates']);
    });

    it('refuses an unknown deletion policy and a malformed adoption', () => {
      expect(messages({ deletionPolicy: 'Orphan' })).toEqual(['spec.deletionPolicy ("Orphan"): must be one of Delete, Retain']);
      expect(messages({ adopt: { credentialID: 'ABC', secretRef: { name: 'Legacy_Secret' } } })).toEqual([
        `spec.adopt.credentialID ("ABC"): ${ADOPTION_RULES[0].message}`,
        `spec.adopt.secretRef.name ("Legacy_Secret"): ${ADOPTION_RULES[1].message}`,
      ]);
      expect(messages({ adopt: { credentialID: ID } })).toEqual(['spec.adopt.secretRef: is required']);
    });

    it('settings scope (a Pulumi resource) checks the template and the policy, not the adoption', () => {
      expect(messages({ secretTemplate: { data: { x: '{{ nope }}' } }, deletionPolicy: 'Keep', adopt: { credentialID: 'x' } }, 'settings')).toHaveLength(2);
    });
  });

  describe('roles and accessRules (issue 42: extension fields beyond the reference)', () => {
    const messages = (spec: object, scope: 'order' | 'settings' = 'order') => validate(withSpec(spec), undefined, scope).map((v) => v.message);
    const rule = (extra: object = {}) => ({ service: 'things', method: 'GET', path: '/v1/things/*', ...extra });

    it('accepts a role subset, and access rules with *, ** and {name} segments', () => {
      expect(messages({ roles: ['member', 'reader'], accessRules: [rule(), rule({ service: 'object-store', method: 'PUT', path: '/v1/AUTH_{project_id}/c/**' })] })).toEqual([]);
    });

    it('refuses an empty list, a duplicate role, a comma, an over-long role, naming each field', () => {
      expect(messages({ roles: [] })).toEqual(['spec.roles ([]): must have at least 1 item']);
      expect(messages({ roles: ['member', 'member'] })).toEqual(['spec.roles (["member","member"]): must not contain duplicates']);
      expect(messages({ roles: ['member', 'a,b'] })).toEqual(['spec.roles (["member","a,b"]): roles entries must not contain a comma']);
      expect(messages({ roles: ['r'.repeat(256)] })).toEqual([`spec.roles[0] ("${'r'.repeat(256)}"): must be at most 255 characters long`]);
    });

    it("refuses what Keystone's schema or keystonemiddleware's matcher cannot take", () => {
      expect(messages({ accessRules: [rule({ method: 'OPTIONS' })] })).toEqual(['spec.accessRules[0].method ("OPTIONS"): must be one of GET, HEAD, POST, PUT, PATCH, DELETE']);
      expect(messages({ accessRules: [{ service: 'things', method: 'GET' }] })).toEqual(['spec.accessRules[0].path: is required']);
      expect(messages({ accessRules: [rule({ service: 'object store' })] })[0]).toMatch(/^spec\.accessRules\[0\]\.service \("object store"\): accessRules\[\]\.service must be a service type/);
      for (const path of ['v1/things', '/v1/(things)', '/v1/things?x=1', '/v1/a+b', '/v1/things\\d']) {
        expect(messages({ accessRules: [rule({ path })] })[0]).toContain(`spec.accessRules[0].path (${JSON.stringify(path)}): accessRules[].path must begin with /`);
      }
      expect(messages({ accessRules: [rule({ path: '/v1/***' })] })).toEqual(['spec.accessRules[0].path ("/v1/***"): accessRules[].path must not hold *** (* is one segment, ** any number of segments)']);
      expect(messages({ accessRules: [rule(), rule({ method: 'HEAD' }), rule()] })[0]).toMatch(/: accessRules must not name the same service, method and path twice$/);
    });

    it('checks both in the settings scope too (the Pulumi resource carries them)', () => {
      expect(messages({ roles: [], accessRules: [rule({ method: 'get' })] }, 'settings')).toEqual([
        'spec.roles ([]): must have at least 1 item',
        'spec.accessRules[0].method ("get"): must be one of GET, HEAD, POST, PUT, PATCH, DELETE',
      ]);
    });
  });
});
