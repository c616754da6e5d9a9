// @needs helm bundle-validate
/**
 * The install channels' artifacts through the real tools, without a cluster: the Helm chart
 * (deploy/charts/keystone-appcred) through helm v4 (`helm lint --strict`; `helm template` with the default values
 * against deploy/install.yaml byte for byte, with the namespaced and monitoring settings against their kustomize
 * components' output, and with every switch, list and scalar against what the constructs synthesize for the same
 * values; the schema refusing a wrong value, naming it), and the OLM bundle (deploy/olm) through the validators of
 * `operator-sdk bundle validate --select-optional suite=operatorframework` (test/support/go/olm).
 *
 * What Helm adds, and what the comparison leaves out: the `# Source:` line of each document and the comment lines of
 * the files, and the order of the documents (Helm sorts them by kind: its install order); each document is compared as
 * text. kustomize writes YAML its own way (lists not indented), so its output is compared as objects.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { CHART_DIR, NOT_VALUES, synthesize } from '../../tools/chart/chart';
import { constructDefaults, type Value, type Values } from '../../tools/chart/values';
import { OLM_DIR } from '../../tools/olm';
import { packageVersion } from '../../src/cli/version';
import { resolveBinary } from '../support/binaries';

jest.setTimeout(180_000);

const REPO = resolve(__dirname, '..', '..');
const HELM = process.env.KAC_HELM as string;
const CHART = join(REPO, CHART_DIR);
const VERSION = packageVersion();
const NAMESPACE = 'keystone-appcred-system';

/** The documents of a YAML stream as Helm and the release tools print them: comments dropped, each trimmed. */
function documentsOf(yaml: string): string[] {
  return yaml
    .split(/^---$/m)
    .map((d) => d.split('\n').filter((line) => !line.startsWith('#')).join('\n').trim())
    .filter((d) => d !== '')
    .sort();
}

function helm(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(HELM, args, { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `helm template` of the chart with `values` over the defaults, in the operator's default namespace. */
function template(values: Record<string, Value> = {}, ...flags: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'kac-helm-values-'));
  try {
    writeFileSync(join(dir, 'values.yaml'), stringify(values));
    const result = helm(['template', 'keystone-appcred', CHART, '--namespace', NAMESPACE, '--values', join(dir, 'values.yaml'), ...flags]);
    if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
    return result.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Deep merge of values, as Helm merges a values file over the chart's. */
function merged(base: Value, over: Value): Value {
  if (over === null || typeof over !== 'object' || Array.isArray(over) || base === null || typeof base !== 'object' || Array.isArray(base)) return over;
  return Object.fromEntries([...new Set([...Object.keys(base), ...Object.keys(over)])].map((k) => [k, k in over ? merged(base[k], over[k]) : base[k]]));
}

/** What the constructs synthesize for the chart's values `over` the defaults (the CRDs left out, as `helm template` does). */
function constructs(over: Record<string, Value>): string {
  const defaults = constructDefaults(VERSION);
  for (const name of NOT_VALUES) delete defaults[name];
  return synthesize(merged(defaults, over) as Values, VERSION, false)
    .map((o) => stringify(o, { lineWidth: 0 }))
    .join('---\n');
}

describe('the Helm chart', () => {
  it('passes helm lint --strict', () => {
    const result = helm(['lint', '--strict', CHART]);
    expect([result.status, result.stdout]).toEqual([0, expect.stringContaining('1 chart(s) linted, 0 chart(s) failed')]);
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it('renders deploy/install.yaml with the default values, document for document, byte for byte', () => {
    const rendered = documentsOf(template({}, '--include-crds'));
    expect(rendered).toEqual(documentsOf(readFileSync(join(REPO, 'deploy', 'install.yaml'), 'utf8')));
    expect(rendered).toHaveLength(19);
  });

  it('renders the namespaced and the monitoring settings as their kustomize components do', () => {
    const kubectl = resolveBinary('kubectl').path;
    const objects = (yaml: string): unknown[] => parseAllDocuments(yaml).map((d) => d.toJS()).filter((o) => o !== null).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const overlay = mkdtempSync(join(tmpdir(), 'kac-overlay-'));
    try {
      cpSync(join(REPO, 'deploy', 'kustomize'), join(overlay, 'kustomize'), { recursive: true });
      for (const [component, values] of [
        ['namespaced-secret-access', { secretAccess: 'namespaced', secretNamespaces: ['openstack'] }],
        ['monitoring', { monitoring: true }],
      ] as const) {
        writeFileSync(join(overlay, 'kustomization.yaml'), stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['kustomize/base'], components: [`kustomize/components/${component}`] }));
        const kustomized = execFileSync(kubectl, ['kustomize', overlay], { encoding: 'utf8' });
        expect([component, objects(template(values as Record<string, Value>, '--include-crds'))]).toEqual([component, objects(kustomized)]);
      }
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  it('renders what the constructs synthesize for every switch, list and scalar, alone and together', () => {
    const settings: Record<string, Record<string, Value>> = {
      'namespaced access, its namespaces and sources (one inside them: no Role of its own)': {
        secretAccess: 'namespaced',
        secretNamespaces: ['openstack', 'tenant-a'],
        sourceSecrets: [
          { name: 'keystone-admin', namespace: 'openstack' },
          { name: 'shared', namespace: 'identity' },
        ],
      },
      monitoring: { monitoring: true },
      'consumer handoff': { consumerHandoff: true },
      'OpenBao token auth and CA': { openBao: { address: 'https://bao.example:8200', auth: { method: 'token', secretName: 'bao-token', key: 't' }, caSecretName: 'bao-ca' } },
      'OpenBao Kubernetes auth elsewhere': { openBao: { auth: { method: 'kubernetes', role: 'kac', mountPath: 'k8s-prod' } } },
      'no namespace object': { createNamespace: false },
      scalars: {
        image: 'registry.example:5000/team/kac',
        tag: '1.2.3-rc.1',
        name: 'kac',
        namespace: 'identity-system',
        replicas: 3,
        imagePullPolicy: 'Always',
        healthPort: 9081,
        metricsPort: 9080,
        requests: { cpu: '250m', memory: '300Mi' },
        limits: { cpu: '2', memory: '1Gi' },
        logLevel: 'debug',
        workers: 16,
        keystoneRequestsPerSecond: 2.5,
        keystoneRequestsInFlight: 0,
        runAsUser: 65532,
      },
      'all together': { monitoring: true, consumerHandoff: true, secretAccess: 'namespaced', secretNamespaces: ['a', 'b'], name: 'kac', namespace: 'ops', logLevel: 'warn', openBao: { auth: { method: 'token', secretName: 's' } } },
    };
    for (const [name, values] of Object.entries(settings)) {
      expect([name, documentsOf(template(values))]).toEqual([name, documentsOf(constructs(values))]);
    }
  });

  it('refuses a value of the wrong type, an unknown value and a missing required one at the schema, naming each', () => {
    const refused = (...set: string[]): string => {
      const result = helm(['template', 'keystone-appcred', CHART, ...set.flatMap((s) => ['--set', s])]);
      expect(result.status).not.toBe(0);
      return result.stderr;
    };
    expect(refused('replicas=two')).toContain("at '/replicas': got string, want number");
    expect(refused('consumerHandoff=maybe')).toContain("at '/consumerHandoff': got string, want boolean");
    expect(refused('replica=3')).toContain("additional properties 'replica' not allowed");
    expect(refused('logLevel=verbose')).toContain("at '/logLevel': value must be one of 'debug', 'info', 'warn', 'error'");
    expect(refused('openBao.auth.method=token')).toContain("at '/openBao/auth/secretName': minLength: got 0, want 1");
    expect(refused('image=')).toContain("at '/image': minLength: got 0, want 1");
  });
});

describe('the OLM bundle', () => {
  const validate = (dir: string): { status: number | null; out: string } => {
    const result = spawnSync(process.env.KAC_BUNDLE_VALIDATE as string, ['--optional-values', 'k8s-version=1.37', dir], { encoding: 'utf8' });
    return { status: result.status, out: `${result.stdout}${result.stderr}` };
  };

  it("passes the operatorframework suite's validators with no finding", () => {
    expect(validate(join(REPO, OLM_DIR))).toEqual({ status: 0, out: 'All validation tests have completed successfully\n' });
  });

  it('fails a bundle with a category OperatorHub does not know and an API Kubernetes removed, naming them', () => {
    const broken = mkdtempSync(join(tmpdir(), 'kac-bundle-'));
    try {
      cpSync(join(REPO, OLM_DIR), broken, { recursive: true });
      const csv = join(broken, 'manifests', 'keystone-appcred.clusterserviceversion.yaml');
      writeFileSync(csv, readFileSync(csv, 'utf8').replace('categories: Security', 'categories: Credentials'));
      const pdb = join(broken, 'manifests', 'keystone-appcred-operator.poddisruptionbudget.yaml');
      writeFileSync(pdb, readFileSync(pdb, 'utf8').replace('apiVersion: policy/v1', 'apiVersion: policy/v1beta1'));
      const result = validate(broken);
      expect(result.status).toBe(1);
      expect(result.out).toContain('ERROR [categories]');
      expect(result.out).toContain('"Credentials" is not in the set of standard categories');
      expect(result.out).toContain('ERROR [alpha-deprecated-apis]');
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });
});
