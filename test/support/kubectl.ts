/**
 * Typed helpers for tests that talk to the test API server (declare `@needs kube`): run kubectl as the admin or the
 * limited identity, server-side apply objects, read JSON, read the server-side Table, make raw HTTPS requests.
 *
 * They read KAC_KUBECTL, KAC_KUBECONFIG, KAC_KUBECONFIG_LIMITED, KAC_KUBE_SERVER, KAC_KUBE_CA_FILE and the client
 * certificate variables that test/support/kube.ts exports.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

/**
 * Which kubeconfig to use: `admin` (group system:masters) or `limited` (user kac-limited, bound to nothing by default)
 * of the API server, or `target` (the admin of the second API server, `@needs target-kube`: a registered target cluster).
 */
export type Identity = 'admin' | 'limited' | 'target';

/** The minimum every Kubernetes object has. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    deletionTimestamp?: string;
    managedFields?: { manager?: string; operation?: string; apiVersion?: string; fieldsType?: string; fieldsV1?: unknown }[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** A list as `kubectl get -o json` returns it. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  items: T[];
}

/** The server-side Table (meta.k8s.io/v1) that `kubectl get` prints. */
export interface KubeTable {
  apiVersion: string;
  kind: 'Table';
  columnDefinitions: { name: string; type: string; format: string; description: string; priority: number }[];
  rows: { cells: unknown[]; object?: unknown }[];
}

export interface KubectlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlOptions {
  /** Identity; default 'admin'. */
  readonly as?: Identity;
  /** Passed as `-n`. */
  readonly namespace?: string;
  /** Written to kubectl's standard input (e.g. for `-f -`). */
  readonly input?: string;
  /** Hard timeout (default 60 s); kubectl is killed after it. */
  readonly timeoutMs?: number;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: declare \`@needs ${name.startsWith('KAC_TARGET_') ? 'target-kube' : 'kube'}\` in the test file`);
  return value;
}

/** The kubeconfig path of an identity. */
export function kubeconfigFor(as: Identity = 'admin'): string {
  return required({ admin: 'KAC_KUBECONFIG', limited: 'KAC_KUBECONFIG_LIMITED', target: 'KAC_TARGET_KUBECONFIG' }[as]);
}

/** Runs kubectl with the identity's kubeconfig; resolves with the exit code and output (never rejects on exit code). */
export function kubectl(args: readonly string[], options: KubectlOptions = {}): Promise<KubectlResult> {
  const full = [`--kubeconfig=${kubeconfigFor(options.as)}`, ...(options.namespace ? ['-n', options.namespace] : []), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(required('KAC_KUBECTL'), full, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A child that exits before reading its input (npm, kubectl) closes the pipe: EPIPE then is no error of the run.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Like {@link kubectl} but rejects when kubectl exits non-zero; resolves with stdout. */
export async function kubectlOk(args: readonly string[], options: KubectlOptions = {}): Promise<string> {
  const result = await kubectl(args, options);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${String(result.code)}): ${result.stderr.trim()}`);
  return result.stdout;
}

/**
 * `kubectl wait --for=condition=Established` on CRDs (`crd/<name>`, or `crd --all`), up to 60 s. kubectl's wait fails at
 * once, instead of waiting, on a CRD the API server has stored but not given a condition yet (`.status.conditions
 * accessor error: <nil>`): right after an apply on a busy machine (a whole-suite run saw it). Such a failure is
 * tried again until the deadline; any other one is thrown.
 */
export async function waitEstablished(crds: readonly string[], options: KubectlOptions = {}): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const left = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    const args = ['wait', '--for=condition=Established', `--timeout=${left}s`, ...crds];
    const result = await kubectl(args, options);
    if (result.code === 0) return;
    if (!result.stderr.includes('accessor error') || Date.now() >= deadline) throw new Error(`kubectl ${args.join(' ')} failed (${String(result.code)}): ${result.stderr.trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface ApplyOptions extends KubectlOptions {
  /** Field manager for server-side apply; default 'kac-test'. */
  readonly fieldManager?: string;
  /** `--force-conflicts`; default false. */
  readonly force?: boolean;
}

/**
 * `kubectl apply --server-side` of one or more objects (sent as a JSON List on stdin). Resolves with the raw result, so a
 * test can assert on a conflict (`code !== 0`, stderr mentions the conflicting manager).
 */
export function apply(objects: KubeObject | readonly KubeObject[], options: ApplyOptions = {}): Promise<KubectlResult> {
  const items = Array.isArray(objects) ? objects : [objects];
  const input = JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  const args = ['apply', '--server-side', `--field-manager=${options.fieldManager ?? 'kac-test'}`, '-o', 'json', '-f', '-'];
  if (options.force) args.push('--force-conflicts');
  return kubectl(args, { ...options, input });
}

/** Like {@link apply} but rejects on failure. */
export async function applyOk(objects: KubeObject | readonly KubeObject[], options: ApplyOptions = {}): Promise<void> {
  const result = await apply(objects, options);
  if (result.code !== 0) throw new Error(`kubectl apply --server-side failed (${String(result.code)}): ${result.stderr.trim()}`);
}

/** `kubectl get <resource> [name] -o json`; rejects when kubectl fails (e.g. NotFound). */
export async function getJson<T = KubeObject>(resource: string, name?: string, options: KubectlOptions = {}): Promise<T> {
  const out = await kubectlOk(['get', resource, ...(name ? [name] : []), '-o', 'json'], options);
  return JSON.parse(out) as T;
}

/** True when `kubectl get <resource> <name>` finds the object, false on NotFound; rejects on other errors. */
export async function exists(resource: string, name: string, options: KubectlOptions = {}): Promise<boolean> {
  const result = await kubectl(['get', resource, name, '-o', 'name'], options);
  if (result.code === 0) return true;
  if (/NotFound|not found/.test(result.stderr)) return false;
  throw new Error(`kubectl get ${resource} ${name} failed: ${result.stderr.trim()}`);
}

/** A raw HTTPS response from the API server. */
export interface KubeResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  json<T = unknown>(): T;
}

export interface KubeRequestOptions {
  readonly as?: Identity;
  /** JSON-encoded unless a string. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
}

/** An HTTPS request to the test API server (path like `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`). */
export function kubeRequest(method: string, path: string, options: KubeRequestOptions = {}): Promise<KubeResponse> {
  const as = options.as ?? 'admin';
  const prefix = as === 'target' ? 'KAC_TARGET_KUBE' : 'KAC_KUBE';
  const cert = required(as === 'limited' ? 'KAC_KUBE_LIMITED_CERT_FILE' : `${prefix}_ADMIN_CERT_FILE`);
  const key = required(as === 'limited' ? 'KAC_KUBE_LIMITED_KEY_FILE' : `${prefix}_ADMIN_KEY_FILE`);
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, required(`${prefix}_SERVER`)),
      {
        method,
        headers,
        ca: readFileSync(required(`${prefix}_CA_FILE`)),
        cert: readFileSync(cert),
        key: readFileSync(key),
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body) as T }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * The server-side Table for a collection or object path (what `kubectl get` prints), e.g.
 * `getTable('/apis/example.com/v1/namespaces/default/widgets')`. `includeObject` asks for 'None' | 'Metadata' | 'Object'.
 */
export async function getTable(path: string, options: { as?: Identity; includeObject?: 'None' | 'Metadata' | 'Object' } = {}): Promise<KubeTable> {
  const sep = path.includes('?') ? '&' : '?';
  const url = `${path}${sep}includeObject=${options.includeObject ?? 'None'}`;
  const res = await kubeRequest('GET', url, {
    as: options.as,
    headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
  });
  if (res.status !== 200) throw new Error(`GET ${url} as Table: ${res.status} ${res.body}`);
  return res.json<KubeTable>();
}

/**
 * Polls `check` every `intervalMs` until it returns a value other than undefined/false; rejects after `timeoutMs`, or
 * at once when `abort` says so (a wait started in a `beforeAll` that the file's end must stop).
 */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 30_000, intervalMs = 250, options: { readonly abort?: () => boolean } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    if (options.abort?.()) throw new Error('the wait was aborted');
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
