/**
 * The Helm chart's generator (tools/chart/) without Helm: its values are the construct's props, its defaults are what
 * `deploy/install.yaml` is made of, the schema holds every value, and the templates of a small synthesis say what
 * changes. Helm itself renders the committed chart in test/integration/helm-chart.test.ts (lint, template against the
 * constructs for every switch and list, the schema's refusals) and installs it in test/e2e/helm-install.test.ts.
 */
import { Chart, Testing } from 'cdk8s';
import { OpenBaoAuth } from '../../../constructs';
import { resolve } from '../../../constructs/operator/props';
import { renderManifests } from '../../../src/cli/manifests';
import { NOT_VALUES, chartSchema, synthesize } from '../../../tools/chart/chart';
import { settingsOf } from '../../../tools/chart/settings';
import { documents, templateText, type Render } from '../../../tools/chart/template';
import { constructDefaults, defaultValues, manifestsOptionsOf, operatorProps, type Value, type Values } from '../../../tools/chart/values';
import { objectsOf } from '../../../tools/objects';

describe('the chart values', () => {
  it('are every prop the construct resolves (a prop missing from the jsii assembly: npm run jsii:baseline)', () => {
    const resolved = resolve(new Chart(Testing.app(), 'c'), { image: 'kac', tag: '1', openBao: { address: 'https://bao:8200', auth: OpenBaoAuth.kubernetes({ role: 'r' }) } });
    expect(operatorProps().map((p) => p.name).sort()).toEqual(Object.keys(resolved).sort());
  });

  it("default to what deploy/install.yaml holds: the constructs' defaults, the manifests command's OpenBao", () => {
    const values = constructDefaults('0.2.0');
    for (const name of NOT_VALUES) delete values[name];
    expect(synthesize(values, '0.2.0')).toEqual(objectsOf(renderManifests({ image: 'keystone-appcred', tag: '0.2.0' })));
    expect(defaultValues('0.2.0')).toMatchObject({ namespace: '', tag: '', monitoring: false, secretAccess: 'cluster-wide', openBao: { auth: { method: 'kubernetes', mountPath: 'kubernetes', key: 'token' } } });
  });

  it('reach the construct as its props: a factory-made OpenBaoAuth by its method, empty strings as absent', () => {
    const values = { ...constructDefaults('1.0.0'), openBao: { address: 'http://bao:8200', auth: { method: 'token', secretName: 'bao-token', key: 'token', role: '', mountPath: '' }, caSecretName: '' } };
    const options = manifestsOptionsOf(values, '1.0.0');
    const auth = (options.operator?.openBao as { auth: OpenBaoAuth }).auth;
    expect([auth.method, auth.secretName, auth.key, auth.role]).toEqual(['token', 'bao-token', 'token', undefined]);
    expect(options.operator?.openBao).not.toHaveProperty('caSecretName');
    expect(() => manifestsOptionsOf({ ...values, openBao: { address: 'x', auth: { method: 'ldap' } } }, '1')).toThrow('method ("ldap") must be one of kubernetes, token');
  });

  it('are each in the schema with its docs; no other value is allowed, and a required string may not be empty', () => {
    const schema = chartSchema();
    const walk = (values: Values, props: Record<string, unknown> | undefined, path: string): void => {
      for (const [key, value] of Object.entries(values)) {
        const own = props?.[key] as { description?: string; properties?: Record<string, unknown>; type?: string } | undefined;
        expect([`${path}${key}`, own !== undefined && Boolean(own.description ?? own.properties)]).toEqual([`${path}${key}`, true]);
        if (own?.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) walk(value, own.properties, `${path}${key}.`);
      }
    };
    walk(Object.fromEntries(Object.entries(defaultValues('1.0.0')).filter(([k]) => !NOT_VALUES.has(k))), schema.properties as Record<string, unknown>, '');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.workersPerKind).toBeUndefined();
    expect(schema.properties?.image).toMatchObject({ type: 'string', minLength: 1 });
    expect(schema.properties?.tag).not.toHaveProperty('minLength');
    expect(schema.properties?.logLevel).toMatchObject({ enum: ['debug', 'info', 'warn', 'error'] });
    expect(schema.properties?.sourceSecrets).toMatchObject({ type: 'array', uniqueItems: true, items: { required: ['name', 'namespace'] } });
    expect(schema.properties?.openBao?.properties?.auth).toMatchObject({ required: ['method'], allOf: [{ if: { properties: { method: { const: 'kubernetes' } } }, then: { required: ['role'] } }, { if: { properties: { method: { const: 'token' } } }, then: { required: ['secretName'] } }] });
  });
});

describe('the template generator', () => {
  // A small synthesis in the constructs' manner: a name in two places, a replica count, a switch that adds an env
  // entry and an object, a list that adds an object per item.
  const render: Render = (values: Values) => {
    const name = String(values.name);
    const env: Value[] = [{ name: 'A', value: '1' }, ...(values.debug ? [{ name: 'DEBUG', value: 'true' }] : []), { name: 'Z', value: String(values.replicas) }];
    const objects: Value[] = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: values.replicas as number, template: { spec: { serviceAccountName: name, containers: [{ name: 'c', env }] } } } },
      ...(values.debug ? [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-debug` } }] : []),
      ...(values.grants as string[]).map((namespace) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-grant`, namespace } })),
    ];
    return objects;
  };
  const schema = { properties: { name: { type: 'string' }, replicas: { type: 'number' }, debug: { type: 'boolean' }, grants: { type: 'array', items: { type: 'string' } } } };
  const defaults: Values = { name: 'app', replicas: 2, debug: false, grants: [] };

  it('classifies each value by synthesizing it changed: text only → scalar, objects → switch, array → list', () => {
    expect(settingsOf(render, defaults, schema, new Set()).map((s) => [s.path.join('.'), s.kind])).toEqual([
      ['name', 'scalar'],
      ['replicas', 'scalar'],
      ['debug', 'switch'],
      ['grants', 'list'],
    ]);
  });

  it('writes expressions where a value shows, conditions around what a switch adds, a range for each item', () => {
    const docs = documents(render, defaults, settingsOf(render, defaults, schema, new Set()), {});
    const text = docs.map(templateText).join('');
    expect(text).toContain('name: {{ include "keystone-appcred.string" $.Values.name }}');
    expect(text).toContain('replicas: {{ toJson $.Values.replicas }}');
    expect(text).toContain('value: {{ include "keystone-appcred.string" $.Values.replicas }}');
    expect(text).toMatch(/\{\{- if \$\.Values\.debug \}\}\n {12}- name: DEBUG\n {14}value: "true"\n\{\{- end \}\}\n/);
    expect(text).toContain('{{- if $.Values.debug }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "keystone-appcred.string" (printf "%s-debug" $.Values.name) }}\n{{- end }}');
    expect(text).toContain('{{- range $item := $.Values.grants }}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ include "keystone-appcred.string" (printf "%s-grant" $.Values.name) }}\n  namespace: {{ include "keystone-appcred.string" $item }}\n{{- end }}');
  });

  it("probes a number within the construct's range: the first candidate it accepts", () => {
    const small: Render = (values) => {
      if ((values.replicas as number) > 4) throw new Error('replicas must be 1 to 4');
      return render(values);
    };
    expect(settingsOf(small, defaults, schema, new Set()).find((s) => s.path[0] === 'replicas')).toEqual({ path: ['replicas'], kind: 'scalar', probe: 3 });
  });

  it('stops, naming the leaf, where no probe explains a change', () => {
    const clock: Render = (values) => [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: String(values.name) }, data: { at: String(Math.random()) } }];
    expect(() => documents(clock, { name: 'app' }, [{ path: ['name'], kind: 'scalar', probe: 'kac-p0-probe' }], {})).toThrow(/ConfigMap\/\/app\.data\.at: .* which no value's probe explains/);
  });
});
