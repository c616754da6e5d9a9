/**
 * The KeystoneApplicationCredential resource as a program constructs it, with Pulumi's mocks, in a process of its own
 * (fixtures/resource-stacks.ts: a dynamic resource's provider is serialized through the V8 inspector, which Jest's
 * sandbox lacks): it registers its inputs, and the SDK's debug stack traces (four per property, for its promise-leak
 * diagnostics only) are left empty while it is constructed, with the process's stack trace limit restored at once,
 * also when the SDK refuses the resource; with PULUMI_DEBUG_PROMISE_LEAKS set they are kept.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

interface Seen {
  limitAfter: number;
  limitAfterRefusal: number;
  refused: string;
  traces: number;
  otherTraces: number;
  leakyTraces: number;
  appInputs?: Record<string, unknown>;
}

let seen: Seen;

beforeAll(() => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures', 'resource-stacks.ts')], { encoding: 'utf8', env: { ...process.env, PULUMI_DEBUG_PROMISE_LEAKS: '' }, timeout: 60_000 });
  seen = JSON.parse(out) as Seen;
}, 90_000);

describe('KeystoneApplicationCredential', () => {
  test('registers with its inputs', () => {
    expect(seen.appInputs).toMatchObject({ rotation: { interval: '2h' } });
  });

  test('constructing it formats one stack trace (the SDK’s own source position), where a resource of as many properties formats one per promise', () => {
    expect(seen.traces).toBe(1);
    expect(seen.otherTraces).toBeGreaterThan(40);
  });

  test('the stack trace limit is restored at once, also when the SDK refuses the resource', () => {
    expect(seen.limitAfter).toBe(17);
    expect(seen.refused).not.toBe('');
    expect(seen.limitAfterRefusal).toBe(23);
  });

  test('with PULUMI_DEBUG_PROMISE_LEAKS set, the debug stacks are kept', () => {
    expect(seen.leakyTraces).toBeGreaterThan(40);
  });
});
