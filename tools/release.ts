/**
 * `npm run release:artifacts` (`tsx tools/release.ts`): this release's install artifacts in `deploy/`, synthesized from
 * the construct library, never written by hand:
 *
 * - `deploy/crds.yaml`: the CRDs and the KeystoneClusterIdentity admission policy;
 * - `deploy/install.yaml`: the CRDs and the operator (cluster-wide Secret access), what `manifests` prints;
 * - `deploy/install-namespaced.yaml`: the same with the namespaced Secret access (a Role in `openstack`);
 * - `deploy/kustomize/base/`: the CRDs and the operator as a kustomize base, and `deploy/kustomize/components/`:
 *   `monitoring` (ServiceMonitor, PrometheusRule, dashboard ConfigMap), `namespaced-secret-access` and
 *   `consumer-handoff`, each the difference the constructs make for that option, as resources and JSON patches that
 *   compose (tools/json-patch.ts), for `kubectl apply -k`, Argo CD and Flux;
 * - `deploy/charts/keystone-appcred/`: the Helm chart, its templates synthesized from the same constructs
 *   (tools/chart/chart.ts);
 * - `deploy/olm/`: the OLM bundle (tools/olm.ts).
 *
 * With `--sbom DIR` (and `--image REF`), the release's CycloneDX bills of materials instead: the package's and the
 * image's (tools/sbom.ts), written to DIR, not committed (they describe a build: the lock's tree, the image's base).
 *
 * The constructs are reached through the `manifests` command's renderer alone (src/cli/manifests.ts: here in
 * {@link variants}, for the chart through its values' mapping, for the bundle in tools/olm.ts), so a change of the
 * construct library's API is adapted there. `--check` writes nothing
 * and exits 1 when `deploy/` differs from what this release synthesizes (test/unit/tools/release.test.ts runs it).
 *
 * The image is `keystone-appcred:<version>`, a name to be replaced, as kubebuilder's `controller:latest` is: the image
 * is built from the Dockerfile and pushed where the cluster pulls from, and a kustomization sets it with `images:`.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import { renderManifests } from '../src/cli/manifests';
import { packageVersion } from '../src/cli/version';
import { CHART_DIR, chartFiles } from './chart/chart';
import { jsonPatch } from './json-patch';
import { objectsOf, type Manifest } from './objects';
import { bundleFiles } from './olm';
import { writeSboms } from './sbom';

const REPO = resolve(__dirname, '..');
/** Where the artifacts live. */
export const DEPLOY = 'deploy';
/** The operator image's name in the artifacts, for `images:` (kustomize) or a search-and-replace to set. */
export const RELEASE_IMAGE = 'keystone-appcred';
/** The namespaces the namespaced Secret access variant grants (the ControlPlane namespace the docs use). */
export const SECRET_NAMESPACES = ['openstack'] as const;


/** The kinds `crds.yaml` holds: what must exist before any order, and what `Crds` synthesizes. */
const CRD_KINDS = new Set(['CustomResourceDefinition', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** The components: each an option of the `manifests` renderer, diffed against the base. */
export const COMPONENTS = {
  monitoring: { monitoring: true },
  'namespaced-secret-access': { secretGrants: { namespaces: [...SECRET_NAMESPACES], sources: [] } },
  'consumer-handoff': { consumerHandoff: true },
} as const;
export type ComponentName = keyof typeof COMPONENTS;

/** The one place the constructs are synthesized: the base and each component's variant, as YAML. */
export function variants(version: string = packageVersion()): { readonly base: string } & Record<ComponentName, string> {
  const base = { image: RELEASE_IMAGE, tag: version };
  return {
    base: renderManifests(base),
    monitoring: renderManifests({ ...base, ...COMPONENTS.monitoring }),
    'namespaced-secret-access': renderManifests({ ...base, ...COMPONENTS['namespaced-secret-access'] }),
    'consumer-handoff': renderManifests({ ...base, ...COMPONENTS['consumer-handoff'] }),
  };
}

export { objectsOf };

const keyOf = (o: Manifest): string => `${o.apiVersion.split('/').length > 1 ? o.apiVersion.split('/')[0] : ''}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const documents = (objects: readonly Manifest[]): string => objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');

function header(version: string, what: string): string {
  return `# ${what}\n# keystone-appcred ${version}, generated from the construct library by tools/release.ts: do not edit (npm run release:artifacts).\n`;
}

/** A kustomize component: what the variant adds as resources, what it changes as JSON patches (one file per object). */
function component(name: ComponentName, base: readonly Manifest[], variant: readonly Manifest[], version: string): Map<string, string> {
  const files = new Map<string, string>();
  const byKey = new Map(base.map((o) => [keyOf(o), o]));
  const variantKeys = new Set(variant.map(keyOf));
  const removed = base.filter((o) => !variantKeys.has(keyOf(o)));
  if (removed.length > 0) throw new Error(`component ${name}: the variant drops ${removed.map(keyOf).join(', ')}, which a component cannot express`);
  const added = variant.filter((o) => !byKey.has(keyOf(o)));
  const patches: { target: Record<string, string>; path: string }[] = [];
  for (const o of variant) {
    const before = byKey.get(keyOf(o));
    if (!before) continue;
    const ops = jsonPatch(before, o);
    if (ops.length === 0) continue;
    const [group, apiVersion] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
    const file = `patch-${o.kind.toLowerCase()}-${o.metadata.name}.yaml`;
    files.set(file, header(version, `${o.kind} ${o.metadata.name}: the ${name} component's change, as a JSON patch`) + stringify(ops, { lineWidth: 0 }));
    patches.push({ target: { ...(group ? { group } : {}), version: apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) }, path: file });
  }
  if (added.length > 0) files.set('resources.yaml', header(version, `the objects the ${name} component adds`) + documents(added));
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    ...(added.length > 0 ? { resources: ['resources.yaml'] } : {}),
    ...(patches.length > 0 ? { patches } : {}),
  };
  files.set('kustomization.yaml', header(version, `the ${name} component of keystone-appcred's kustomize base`) + stringify(kustomization, { lineWidth: 0 }));
  return files;
}

/** Every artifact of this release, by its path under the repository. */
export function releaseArtifacts(version: string = packageVersion()): Map<string, string> {
  const yaml = variants(version);
  const base = objectsOf(yaml.base);
  const crds = base.filter((o) => CRD_KINDS.has(o.kind));
  const rest = base.filter((o) => !CRD_KINDS.has(o.kind));
  const files = new Map<string, string>();
  files.set(`${DEPLOY}/crds.yaml`, header(version, 'the CRDs and the KeystoneClusterIdentity admission policy: apply first') + documents(crds));
  files.set(`${DEPLOY}/install.yaml`, header(version, 'the CRDs and the operator, Secrets read cluster-wide') + documents(base));
  files.set(`${DEPLOY}/install-namespaced.yaml`, header(version, `the CRDs and the operator, Secrets granted by a Role in ${SECRET_NAMESPACES.join(', ')} only`) + documents(objectsOf(yaml['namespaced-secret-access'])));
  const kustomize = `${DEPLOY}/kustomize`;
  files.set(`${kustomize}/base/crds.yaml`, header(version, 'the CRDs and the KeystoneClusterIdentity admission policy') + documents(crds));
  files.set(`${kustomize}/base/operator.yaml`, header(version, 'the operator: namespace, RBAC, Deployment, metrics Service, PodDisruptionBudget') + documents(rest));
  files.set(
    `${kustomize}/base/kustomization.yaml`,
    header(version, "keystone-appcred's kustomize base: add the components under ../components as you need them") +
      stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['crds.yaml', 'operator.yaml'] }, { lineWidth: 0 }),
  );
  for (const name of Object.keys(COMPONENTS) as ComponentName[]) {
    for (const [file, text] of component(name, base, objectsOf(yaml[name]), version)) files.set(`${kustomize}/components/${name}/${file}`, text);
  }
  for (const [file, text] of chartFiles(version)) files.set(`${CHART_DIR}/${file}`, text);
  for (const [path, text] of bundleFiles(RELEASE_IMAGE, version, (what) => header(version, what))) files.set(path, text);
  return files;
}

/** The files under `deploy/` now, by path. */
function present(repo: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.set(relative(repo, path), readFileSync(path, 'utf8'));
    }
  };
  walk(join(repo, DEPLOY));
  return out;
}

/** The paths whose content differs (missing, changed or left over) between `deploy/` and this release's artifacts. */
export function staleArtifacts(repo: string = REPO): string[] {
  const want = releaseArtifacts();
  const have = present(repo);
  return [...new Set([...want.keys(), ...have.keys()])].filter((p) => want.get(p) !== have.get(p)).sort();
}

/** Writes the artifacts, removing files under `deploy/` that are no longer one. */
export function writeArtifacts(repo: string = REPO): string[] {
  const want = releaseArtifacts();
  for (const path of present(repo).keys()) if (!want.has(path)) rmSync(join(repo, path));
  for (const [path, text] of want) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  return [...want.keys()];
}

/** The value after `flag` on the command line. */
const argument = (flag: string): string | undefined => {
  const at = process.argv.indexOf(flag);
  return at < 0 ? undefined : process.argv[at + 1];
};

if (require.main === module) {
  const sbom = argument('--sbom');
  if (sbom !== undefined) {
    // The bills of materials (tools/sbom.ts): `--sbom DIR`, and the image's with `--image REF`.
    writeSboms(resolve(sbom), packageVersion(), argument('--image')).then(
      (paths) => process.stdout.write(paths.map((p) => `${p}\n`).join('')),
      (error: unknown) => {
        process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  } else if (process.argv.includes('--check')) {
    const stale = staleArtifacts();
    if (stale.length > 0) {
      process.stderr.write(`deploy/ is not what this release synthesizes: ${stale.join(', ')}; run npm run release:artifacts\n`);
      process.exit(1);
    }
  } else {
    for (const path of writeArtifacts()) process.stdout.write(`${path}\n`);
  }
}
