/**
 * Reading a Pulumi stack's state in tests: the resources of `pulumi stack export --show-secrets` with the secret
 * envelopes opened, and the scan of every file of a file backend for secrets in plain text.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The key of Pulumi's secret envelope. */
const SECRET_SIG = '4dabf18193072939515e22adb298388d';

/** `stack export --show-secrets` keeps the secret envelope, with the value as JSON in `plaintext`: the values inside. */
export function unwrapSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (SECRET_SIG in record) return unwrapSecrets('plaintext' in record ? JSON.parse(record.plaintext as string) : record.value);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, unwrapSecrets(v)]));
}

/** A resource of an exported deployment. */
export interface ExportedResource {
  readonly urn: string;
  readonly type: string;
  readonly id?: string;
  readonly inputs?: Record<string, unknown>;
  readonly outputs?: Record<string, unknown>;
}

/** The resources of `stack export` output. */
export function exportedResources(text: string): ExportedResource[] {
  return (JSON.parse(text) as { deployment: { resources?: ExportedResource[] } }).deployment.resources ?? [];
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) filesUnder(path, out);
    else out.push(path);
  }
  return out;
}

/** The directory of the tests' file backend. */
export function backendDir(): string {
  return (process.env.KAC_PULUMI_BACKEND_URL ?? '').replace(/^file:\/\//, '');
}

/**
 * Throws, naming the file (never the value), when any file of the backend (the tests' own, or `dir`) holds one of
 * `secrets` in plain text; `expectFile` must be among the files (so the scan cannot pass on an empty backend).
 */
export function expectNoPlaintextInState(secrets: readonly string[], expectFile: string, dir: string = backendDir()): void {
  const files = filesUnder(dir);
  if (!files.some((f) => f.endsWith(expectFile))) throw new Error(`the backend has no file ${expectFile}`);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const value of secrets) {
      if (value.length > 0 && text.includes(value)) throw new Error(`${file} contains a secret in plain text`);
    }
  }
}
