/**
 * The jsii compatibility check: `jsii-diff` between the API of record, `docs/api/keystone-appcred-cdk8s.jsii` (the
 * assembly as last accepted, without its readme, fingerprint and source line numbers), and the assembly built from the checkout. Every change a user of any
 * language would stumble on (a type, member or prop removed, a prop made required, a type narrowed) fails it; the
 * library is 0.x and `experimental`, so `--experimental-errors` makes those errors too. An accepted change updates the
 * record (`npm run jsii:baseline`) in the same commit as its CHANGELOG entry, and the review sees the diff.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './package';

/** The API of record. */
export const BASELINE = join(ROOT, 'docs', 'api', 'keystone-appcred-cdk8s.jsii');

/** Members of an assembly that change without the API changing: the readme, the fingerprint, source line numbers. */
const UNSTABLE = new Set(['readme', 'fingerprint', 'locationInModule']);

/** The record of an assembly: without {@link UNSTABLE} members (and, with `withDocs: false`, without docs), keys sorted. */
export function recordOf(assemblyFile: string, options: { readonly withDocs?: boolean } = {}): string {
  const drop = new Set([...UNSTABLE, ...(options.withDocs === false ? ['docs'] : [])]);
  const clean = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(clean)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([k]) => !drop.has(k))
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => [k, clean(v)]),
          )
        : value;
  return `${JSON.stringify(clean(JSON.parse(readFileSync(assemblyFile, 'utf8'))), null, 1)}\n`;
}

/** Writes the API of record from a built stage's assembly. */
export function writeBaseline(stage: string, file: string = BASELINE): string {
  writeFileSync(file, recordOf(join(stage, '.jsii')));
  return file;
}

/** What jsii-diff said: exit code 0 when nothing breaks. */
export interface DiffResult {
  readonly code: number | null;
  readonly output: string;
}

/**
 * jsii-diff of the record `baselineText` (an assembly's JSON) against the built `stage`. The record is laid out as a
 * package (its `.jsii`, the stage's package.json, and the stage's node_modules) so the peers' assemblies it refers to
 * resolve as the stage's do.
 */
export function apiDiff(stage: string, baselineText: string = readFileSync(BASELINE, 'utf8')): DiffResult {
  const dir = mkdtempSync(join(tmpdir(), 'kac-jsii-baseline-'));
  try {
    writeFileSync(join(dir, '.jsii'), baselineText);
    cpSync(join(stage, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(stage, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const result = spawnSync(join(ROOT, 'node_modules', '.bin', 'jsii-diff'), ['--experimental-errors', dir, stage], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`, JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION: '1' },
      timeout: 300_000,
    });
    return { code: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
