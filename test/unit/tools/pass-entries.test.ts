/**
 * tools/pass-entries.ts measures a credential pass by instrumenting src/ as it loads: run as its command (its probes
 * replace the loader of src/'s files, which Jest's own module system bypasses), it sees a new order's first pass from
 * the reconciler's entry through the gates, the lifecycle and back into the driver's ports, and its counts agree with
 * its trace. And the pass's shape (issue 47): read → gates → ports → lifecycle → announce, the gates one call that asks
 * each rule module once.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Measurement } from '../../../tools/pass-entries';

const ROOT = resolve(__dirname, '..', '..', '..');

describe('tools/pass-entries.ts', () => {
  let first: Measurement;

  beforeAll(() => {
    const result = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'tools', 'pass-entries.ts'), 'first', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    if (result.status !== 0) throw new Error(`pass-entries failed (${String(result.status ?? result.error)}):\n${result.stderr}`);
    [first] = JSON.parse(result.stdout) as Measurement[];
  }, 120_000);

  it("follows the first pass from the reconciler's entry through the gates and the lifecycle, and back into the driver", () => {
    expect(first.actions).toEqual(expect.arrayContaining(['mint done', 'deliver done']));
    const trace = first.views.pass.trace;
    expect(trace[0]).toMatch(/^\(outside src\/\) → src\/operator\/credential\/reconciler\.ts: CredentialReconciler\.reconcile:\d+$/);
    expect(trace).toContainEqual(expect.stringMatching(/^src\/operator\/credential\/reconciler\.ts → src\/plane\/gates\.ts: credentialGates:\d+$/));
    expect(trace).toContainEqual(expect.stringMatching(/^src\/operator\/credential\/reconciler\.ts → src\/lifecycle\/runner\.ts: reconcile:\d+$/));
    // A callback the driver handed the lifecycle (its status port) is an entry back into the driver's file.
    expect(trace).toContainEqual(expect.stringMatching(/^src\/lifecycle\/runner\.ts → src\/operator\/credential\/reconciler\.ts: writeStatus:\d+$/));
  });

  it('reads a pass top to bottom: the read, the gates, the ports, the lifecycle, the Events, each rule module entered once', () => {
    const trace = first.views.pass.trace;
    const at = (pattern: RegExp) => trace.findIndex((t) => pattern.test(t));
    const steps = [
      /^src\/operator\/credential\/reconciler\.ts → src\/plane\/credential-reads\.ts: readCredential:\d+$/,
      /^src\/operator\/credential\/reconciler\.ts → src\/plane\/gates\.ts: credentialGates:\d+$/,
      /^src\/operator\/credential\/reconciler\.ts → src\/operator\/credential\/pass-ports\.ts: passPorts:\d+$/,
      /^src\/operator\/credential\/reconciler\.ts → src\/lifecycle\/runner\.ts: reconcile:\d+$/,
      /^src\/operator\/credential\/reconciler\.ts → src\/operator\/credential\/announce\.ts: actionEvents:\d+$/,
    ].map(at);
    expect(steps.every((i) => i >= 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    const entries = new Map(first.views.pass.crossings.byFile.map((f) => [f.file, f.entries]));
    for (const file of ['src/plane/credential-reads.ts', 'src/plane/gates.ts', 'src/plane/consent.ts', 'src/plane/delivery.ts', 'src/lifecycle/runner.ts']) {
      expect([file, entries.get(file)]).toEqual([file, 1]);
    }
    // references.ts: once by the read (the role assignments' selector), once by the gates (the user, the project, the roles).
    expect(entries.get('src/plane/references.ts')).toBe(2);
  });

  it('counts what its trace shows: entries, files, and returns to a file left before', () => {
    for (const view of Object.values(first.views)) {
      expect(view.crossings.entries).toBe(view.trace.length);
      expect(view.crossings.files).toBe(new Set(view.trace.map((t) => t.split(' → ')[1].split(':')[0])).size);
      for (const counts of [view.crossings, view.calls]) {
        expect(counts.returns).toBe(counts.entries - counts.files);
        expect(counts.byFile.reduce((sum, f) => sum + f.entries, 0)).toBe(counts.entries);
      }
      expect(view.calls.entries).toBeGreaterThanOrEqual(view.crossings.entries);
    }
    // The pass's view leaves out the kinds' vocabulary (src/api) and what lies below the cluster port (src/kube).
    expect(first.views.pass.crossings.byFile.some((f) => /^src\/(api|kube)\//.test(f.file))).toBe(false);
    expect(first.views.src.crossings.byFile.some((f) => f.file.startsWith('src/kube/'))).toBe(true);
  });
});
