// @needs kube openbao pulumi
/**
 * Smoke tests of the real test environment itself: the API server enforces CEL rules, server-side apply reports
 * conflicts, finalizers hold deletion, RBAC refuses the limited identity, the controller manager collects garbage,
 * OpenBao's KV v2 round-trips a secret at the spec's backing path, and the Pulumi CLI runs a dynamic resource through
 * up, refresh and destroy offline.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { apply, applyOk, eventually, exists, getJson, getTable, kubectl, kubectlOk, waitEstablished, type KubeObject } from '../support/kubectl';
import { copyPulumiProgram, runPulumi } from '../support/pulumi';

const GROUP = 'envsmoke.kac.example.com';
const NS = 'kac-env-smoke';

const widgetCrd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [{ name: 'Min', type: 'integer', jsonPath: '.spec.min' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: { min: { type: 'integer' }, max: { type: 'integer' } },
                'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }],
              },
            },
          },
        },
      },
    ],
  },
};

const widget = (name: string, spec: { min: number; max: number }): KubeObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  metadata: { name, namespace: NS },
  spec,
});

describe('kube-apiserver', () => {
  // The cluster lock: another file may restart the shared API server (test/reliability/outages.test.ts).
  let unlock: (() => void) | undefined;
  beforeAll(async () => {
    unlock = await lockCluster('environment.test.ts');
    await applyOk([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, widgetCrd]);
    await waitEstablished([`crd/widgets.${GROUP}`]);
  }, LOCKED_SETUP_MS);
  afterAll(() => unlock?.());

  it('accepts a CRD with a CEL rule and rejects an object that breaks it with the rule message', async () => {
    await applyOk(widget('good', { min: 1, max: 3 }));
    const bad = await apply(widget('bad', { min: 5, max: 3 }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('min must not exceed max');
    expect(await exists('widgets', 'bad', { namespace: NS })).toBe(false);
  });

  it('serves the Table with the CRD printer columns', async () => {
    const table = await getTable(`/apis/${GROUP}/v1/namespaces/${NS}/widgets`);
    // A CRD that declares printer columns gets exactly Name plus those (no default Age column).
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Min']);
    expect(table.rows.some((r) => r.cells[0] === 'good')).toBe(true);
    const wide = await kubectlOk(['get', 'widgets', '-o', 'wide'], { namespace: NS });
    expect(wide).toMatch(/^NAME\s+MIN\s*$/m);
    expect(wide).toMatch(/^good\s+1\s*$/m);
  });

  it('reports a conflict when a second field manager applies a field the first one owns', async () => {
    await applyOk(widget('shared', { min: 1, max: 9 }), { fieldManager: 'manager-a' });
    const clash = await apply(widget('shared', { min: 2, max: 9 }), { fieldManager: 'manager-b' });
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toMatch(/conflict/i);
    expect(clash.stderr).toContain('manager-a');
    await applyOk(widget('shared', { min: 2, max: 9 }), { fieldManager: 'manager-b', force: true });
    const got = await getJson<KubeObject & { spec: { min: number } }>('widget', 'shared', { namespace: NS });
    expect(got.spec.min).toBe(2);
  });

  it('keeps an object with a finalizer until the finalizer is removed', async () => {
    await applyOk({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', namespace: NS, finalizers: ['kac.example.com/hold'] },
      data: { a: 'b' },
    });
    await kubectlOk(['delete', 'configmap', 'held', '--wait=false'], { namespace: NS });
    const held = await getJson('configmap', 'held', { namespace: NS });
    expect(held.metadata.deletionTimestamp).toBeDefined();
    await kubectlOk(['patch', 'configmap', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], { namespace: NS });
    await eventually(async () => !(await exists('configmap', 'held', { namespace: NS })), 20_000);
  });

  it('refuses the limited identity what RBAC does not grant, and allows it once bound', async () => {
    const refused = await kubectl(['get', 'configmaps'], { as: 'limited', namespace: NS });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/forbidden/i);
    expect(refused.stderr).toContain(process.env.KAC_KUBE_LIMITED_USER);
    await applyOk([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'read-configmaps', namespace: NS },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'read-configmaps', namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-configmaps' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: process.env.KAC_KUBE_LIMITED_USER ?? '' }],
      },
    ]);
    await eventually(async () => (await kubectl(['get', 'configmaps'], { as: 'limited', namespace: NS })).code === 0, 20_000);
    const stillRefused = await kubectl(['create', 'configmap', 'nope'], { as: 'limited', namespace: NS });
    expect(stillRefused.code).not.toBe(0);
    expect(stillRefused.stderr).toMatch(/forbidden/i);
  });

  const gcIt = process.env.KAC_KUBE_GC === '1' ? it : it.skip;
  gcIt('garbage-collects an object whose owner is deleted (kube-controller-manager)', async () => {
    await applyOk({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: NS } });
    const owner = await getJson('configmap', 'owner', { namespace: NS });
    await applyOk({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'dependent',
        namespace: NS,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' }],
      },
    });
    await kubectlOk(['delete', 'configmap', 'owner'], { namespace: NS });
    await eventually(async () => !(await exists('configmap', 'dependent', { namespace: NS })), 60_000, 500);
  });
});

describe('OpenBao', () => {
  const addr = (): string => process.env.KAC_BAO_ADDR ?? '';
  const headers = (): Record<string, string> => ({ 'X-Vault-Token': process.env.KAC_BAO_TOKEN ?? '', 'Content-Type': 'application/json' });
  const path = 'keystone/openstack/keystone-abc12-applicationcredential/service-accounts/application-credential';

  it('round-trips a secret through KV v2 at the spec backing path (write, read, delete)', async () => {
    const mount = process.env.KAC_BAO_KV_MOUNT;
    expect(mount).toBe('openstack');
    const write = await fetch(`${addr()}/v1/${mount}/data/${path}`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ data: { id: 'ac-1', secret: 's3cr3t' } }),
    });
    expect(write.status).toBe(200);
    expect(((await write.json()) as { data: { version: number } }).data.version).toBe(1);

    const read = await fetch(`${addr()}/v1/${mount}/data/${path}`, { headers: headers() });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: { data: Record<string, string> } }).data.data).toEqual({ id: 'ac-1', secret: 's3cr3t' });

    const del = await fetch(`${addr()}/v1/${mount}/metadata/${path}`, { method: 'DELETE', headers: headers() });
    expect(del.status).toBe(204);
    const gone = await fetch(`${addr()}/v1/${mount}/data/${path}`, { headers: headers() });
    expect(gone.status).toBe(404);
  });
});

describe('Pulumi CLI', () => {
  it('runs up, refresh and destroy of a dynamic resource offline', async () => {
    const program = copyPulumiProgram(join(__dirname, 'fixtures', 'pulumi-dynamic'));
    const target = join(program, 'out');
    mkdirSync(target);
    const run = async (...args: string[]): Promise<string> => {
      const r = await runPulumi([...args, '--non-interactive'], { cwd: program });
      if (r.code !== 0) throw new Error(`pulumi ${args.join(' ')} failed (${String(r.code)}):\n${r.stdout}\n${r.stderr}`);
      return r.stdout;
    };
    await run('stack', 'init', 'smoke');
    await run('config', 'set', 'dir', target);
    await run('up', '--yes', '--skip-preview');
    const file = join(target, 'smoke.txt');
    expect(readFileSync(file, 'utf8')).toBe('hello');
    expect(JSON.parse(await run('stack', 'output', '--json'))).toMatchObject({ content: 'hello', path: file });

    // Change the file behind Pulumi's back; refresh reads it through the provider's read().
    writeFileSync(file, 'changed outside');
    await run('refresh', '--yes', '--skip-preview');
    const state = JSON.parse(await run('stack', 'export')) as {
      deployment: { resources?: { type: string; outputs?: Record<string, unknown> }[] };
    };
    const resource = state.deployment.resources?.find((r) => r.type === 'pulumi-nodejs:dynamic:Resource');
    expect(resource?.outputs?.content).toBe('changed outside');

    await run('destroy', '--yes', '--skip-preview');
    expect(existsSync(file)).toBe(false);
    await run('stack', 'rm', '--yes');
  }, 300_000);
});
