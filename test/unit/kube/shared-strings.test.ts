/**
 * src/kube/shared-strings.ts: what a cache keeps of an object is an equal copy (key order included) whose repeated
 * strings are shared; the object as listed or watched is never changed (the in-memory cluster's are frozen).
 */
import { sharedString, withSharedStrings } from '../../../src/kube/shared-strings';

const order = () => ({
  apiVersion: 'c5c3.io/v1alpha1',
  kind: 'KeystoneApplicationCredential',
  metadata: {
    name: 'o1',
    namespace: 'team-a',
    uid: 'fbd4168f',
    resourceVersion: '1732',
    generation: 2,
    creationTimestamp: '2026-12-07T15:00:51Z',
    finalizers: ['c5c3.io/keystoneapplicationcredential'],
    labels: { app: 'x', __proto__: 'kept-as-a-key', tier: 'a', four: '4', five: '5', six: '6' },
    ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneUser', name: 'u1', uid: 'abc', controller: false }],
  },
  spec: { userRef: { name: 'u1' }, roles: ['member'] },
  status: {
    credentialGeneration: 1,
    secretKeys: ['clouds.yaml', 'application_credential_id'],
    conditions: [
      { type: 'Ready', status: 'True', reason: 'AllReady', message: 'ok', lastTransitionTime: '2026-12-07T15:00:51Z', observedGeneration: 2 },
      { type: 'CredentialReady', status: 'True', reason: 'CredentialMinted', message: 'm'.repeat(400), lastTransitionTime: '2026-12-07T15:00:51Z' },
    ],
    nested: [{ a: 1 }],
  },
});

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
};

describe('withSharedStrings', () => {
  it('is an equal copy, key order included, of an object it never changes (a frozen one too)', () => {
    const object = JSON.parse(JSON.stringify(order())) as ReturnType<typeof order>;
    const frozen = deepFreeze(JSON.parse(JSON.stringify(order())) as ReturnType<typeof order>);
    for (const input of [object, frozen]) {
      const copy = withSharedStrings(input);
      expect(copy).toEqual(input);
      expect(JSON.stringify(copy)).toBe(JSON.stringify(input));
      expect(copy).not.toBe(input);
    }
    expect(JSON.stringify(object)).toBe(JSON.stringify(JSON.parse(JSON.stringify(order()))));
  });

  it('keeps a label key `__proto__` as a key, not as the prototype', () => {
    const object = JSON.parse('{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","labels":{"__proto__":"p","b":"c"}},"data":{"__proto__":"eA=="}}') as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; labels: Record<string, string> };
      data: Record<string, string>;
    };
    const copy = withSharedStrings(object);
    expect(Object.getPrototypeOf(copy.metadata.labels)).toBe(Object.prototype);
    expect(Object.keys(copy.metadata.labels)).toEqual(['__proto__', 'b']);
    expect(Object.getOwnPropertyDescriptor(copy.metadata.labels, '__proto__')?.value).toBe('p');
    expect(copy.data).toBe(object.data); // a Secret's data is the object's own, never copied
  });

  it('an object with none of the fields (metadata only, no status) stays equal', () => {
    const object = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } };
    expect(withSharedStrings(object)).toEqual(object);
  });

  it('sharedString returns an equal string, pooled or not, across more values than a generation holds', () => {
    for (const value of ['', 'team-a', '1732', '2026-12-07T15:00:51Z', 'x'.repeat(161), '__proto__', 'constructor']) expect(sharedString(value)).toBe(value);
    for (let i = 0; i < 40_000; i++) expect(sharedString(`v${i % 20_000}`)).toBe(`v${i % 20_000}`);
  });
});
