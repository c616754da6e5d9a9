/**
 * src/kube/intern.ts: what a cache keeps of an object is an equal copy with its short strings shared; the object as
 * listed or watched is never changed (the in-memory cluster's are frozen), and nothing of it is lost.
 */
import { interned, internString } from '../../../src/kube/intern';

const secret = () => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: 'o1-credentials',
    namespace: 'team-a',
    resourceVersion: '1732',
    labels: { 'c5c3.io/keystoneapplicationcredential-name': 'o1', 'c5c3.io/keystoneapplicationcredential-namespace': 'team-a' },
    ownerReferences: [{ apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', name: 'o1', uid: 'fbd4168f', controller: true, blockOwnerDeletion: true }],
  },
  data: { 'clouds.yaml': 'Y2xvdWRzOgogIG9wZW5zdGFjazoKICAgIGF1dGg6CiAgICAgIGF1dGhfdXJsOiBodHRwczovL2tleXN0b25lLmV4YW1wbGUvdjMK', '0': 'eA==' },
  type: 'Opaque',
  generation: 3,
  deleted: null,
});

describe('interned: the copy a cache keeps', () => {
  it('is equal to the object, key order included, numbers, booleans and null kept', () => {
    const object = secret();
    const copy = interned(object);
    expect(copy).toEqual(object);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(object));
    expect(copy).not.toBe(object);
    expect(copy.metadata.ownerReferences).not.toBe(object.metadata.ownerReferences);
  });

  it('never changes the object it copies: a frozen one is copied as it is', () => {
    const freeze = <T>(value: T): T => {
      if (typeof value === 'object' && value !== null) for (const v of Object.values(value)) freeze(v);
      return Object.freeze(value);
    };
    const object = freeze(secret());
    expect(interned(object)).toEqual(secret());
  });

  it('keeps a data key `__proto__` as a key, not as the prototype', () => {
    const object = JSON.parse('{"data":{"__proto__":"c2VjcmV0","other":"eA=="}}') as { data: Record<string, string> };
    const copy = interned(object);
    expect(Object.getPrototypeOf(copy.data)).toBe(Object.prototype);
    expect(Object.keys(copy.data)).toEqual(['__proto__', 'other']);
    expect(Object.getOwnPropertyDescriptor(copy.data, '__proto__')?.value).toBe('c2VjcmV0');
  });

  it('keeps what is not a plain object or array as it is', () => {
    const date = new Date(0);
    const buffer = Buffer.from('x');
    const copy = interned({ at: date, bytes: buffer });
    expect(copy.at).toBe(date);
    expect(copy.bytes).toBe(buffer);
  });

  it('internString returns an equal string, for short ones, long ones, indexes and the empty string', () => {
    for (const value of ['', 'team-a', '1732', '2026-12-07T15:00:51Z', 'x'.repeat(65), '__proto__', 'constructor']) expect(internString(value)).toBe(value);
  });
});
