import { RULES, validate, withSchemaDefaults, type OrderInput } from '../../../src/api';

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
});
