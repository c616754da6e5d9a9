/**
 * The CRD evolution check (tools/crd-evolution.ts) on hand-made pairs: each breaking change is found with its path, and
 * the compatible ones (a new optional field with rules of its own, a widened limit or enum, a new version) are not.
 * The check between the previous release and this one is test/integration/crd-evolution.test.ts.
 */
import { breakingChanges, type SchemaNode } from '../../../tools/crd-evolution';

const crd = (spec: SchemaNode, versions: { name: string; served?: boolean }[] = [{ name: 'v1alpha1' }]) => ({
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.example.io' },
  spec: {
    group: 'example.io',
    scope: 'Namespaced',
    names: { kind: 'Thing', plural: 'things' },
    versions: versions.map((v) => ({ name: v.name, served: v.served ?? true, storage: v.name === 'v1alpha1', schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } })),
  },
});
const base: SchemaNode = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', maxLength: 63, pattern: '^[a-z]+$' },
    mode: { type: 'string', enum: ['a', 'b'] },
    items: { type: 'array', maxItems: 10, items: { type: 'string' } },
    interval: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self != ""' }] },
  },
};
const ids = (after: SchemaNode, versions?: { name: string; served?: boolean }[]) => breakingChanges([crd(base)], [crd(after, versions)]).map((b) => b.id);
const props = base.properties as Record<string, SchemaNode>;

describe('breakingChanges', () => {
  it('nothing between equal CRDs, for a new optional field with a rule of its own, a widened limit or enum, a rule removed, a new version', () => {
    expect(ids(base)).toEqual([]);
    const widened: SchemaNode = {
      ...base,
      properties: {
        ...props,
        name: { type: 'string', maxLength: 253, pattern: '^[a-z]+$' },
        mode: { type: 'string', enum: ['a', 'b', 'c'] },
        interval: { type: 'string' },
        accessRules: { type: 'array', maxItems: 5, items: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule: 'size(self) > 0' }] },
      },
    };
    expect(ids(widened, [{ name: 'v1alpha1' }, { name: 'v1beta1' }])).toEqual([]);
  });

  it('finds a removed or renamed field, a new required field, a narrowed enum or limit, a new pattern, a new rule on an old field, a type change', () => {
    const withoutMode = Object.fromEntries(Object.entries(props).filter(([k]) => k !== 'mode'));
    expect(ids({ ...base, properties: withoutMode })).toEqual(['things.example.io v1alpha1 spec.mode: removed']);
    expect(ids({ ...base, properties: { ...withoutMode, modus: props.mode } })).toEqual(['things.example.io v1alpha1 spec.mode: removed']);
    expect(ids({ ...base, required: ['name', 'items'] })).toEqual(['things.example.io v1alpha1 spec.items: newly required']);
    expect(ids({ ...base, properties: { ...props, region: { type: 'string' } }, required: ['name', 'region'] })).toEqual(['things.example.io v1alpha1 spec.region: newly required']);
    // A new required field with a default breaks nothing: the API server fills it.
    expect(ids({ ...base, properties: { ...props, region: { type: 'string', default: 'r1' } }, required: ['name', 'region'] })).toEqual([]);
    expect(ids({ ...base, properties: { ...props, mode: { type: 'string', enum: ['a'] } } })).toEqual(['things.example.io v1alpha1 spec.mode: enum narrowed: "b" no longer allowed']);
    expect(ids({ ...base, properties: { ...props, name: { type: 'string', maxLength: 30, pattern: '^[a-z]+$' } } })).toEqual(['things.example.io v1alpha1 spec.name: maxLength 63 → 30']);
    expect(ids({ ...base, properties: { ...props, items: { type: 'array', maxItems: 10, minItems: 1, items: { type: 'string', maxLength: 5 } } } })).toEqual([
      'things.example.io v1alpha1 spec.items: minItems none → 1',
      'things.example.io v1alpha1 spec.items[]: maxLength none → 5',
    ]);
    expect(ids({ ...base, properties: { ...props, name: { type: 'string', maxLength: 63, pattern: '^[a-z0-9]+$' } } })).toEqual(['things.example.io v1alpha1 spec.name: pattern "^[a-z]+$" → "^[a-z0-9]+$"']);
    expect(ids({ ...base, properties: { ...props, interval: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self != "0s"' }] } } })).toEqual(['things.example.io v1alpha1 spec.interval: new validation rule "self != \\"0s\\""']);
    expect(ids({ ...base, properties: { ...props, items: { type: 'string' } } })).toEqual(['things.example.io v1alpha1 spec.items: type array → string']);
  });

  it('finds a version no longer served and a CRD gone', () => {
    expect(ids(base, [{ name: 'v1alpha1', served: false }, { name: 'v1' }])).toEqual(['things.example.io v1alpha1 (the version): no longer served']);
    expect(breakingChanges([crd(base)], []).map((b) => b.id)).toEqual(['things.example.io (the CRD): removed']);
  });
});
