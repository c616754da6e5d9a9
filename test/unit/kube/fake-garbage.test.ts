/**
 * The fake API server's garbage collector (./fake-api-server.ts): what it deletes, as the API server's does in the
 * background (a dependent once every owner it names is gone; one with finalizers gets its deletionTimestamp), and what
 * it costs: a deletion that leaves nothing to collect wakes no collection (the simulation's fleets delete thousands of
 * unowned Secrets, and a scan of the whole store after each made the 20,000-order run quadratic).
 */
import { FakeApiServer, type Obj } from './fake-api-server';

const THINGS = '/apis/example.io/v1/things';
const SECRETS = '/api/v1/secrets';

const ownedBy = (...owners: Obj[]) => owners.map((o) => ({ apiVersion: 'example.io/v1', kind: 'Thing', name: o.metadata.name, uid: o.metadata.uid }));

describe('the fake API server garbage collector', () => {
  let server: FakeApiServer;
  beforeEach(() => {
    jest.useFakeTimers();
    server = new FakeApiServer();
  });
  afterEach(() => jest.useRealTimers());

  it('deletes a dependent once every owner it names is gone, and marks one with finalizers', () => {
    const a = server.seed(THINGS, { metadata: { name: 'a', namespace: 'ns' } });
    const b = server.seed(THINGS, { metadata: { name: 'b', namespace: 'ns' } });
    server.seed(SECRETS, { metadata: { name: 'both', namespace: 'ns', ownerReferences: ownedBy(a, b) } });
    server.seed(SECRETS, { metadata: { name: 'held', namespace: 'ns', finalizers: ['example.io/keep'], ownerReferences: ownedBy(a) } });
    server.remove(THINGS, 'ns', 'a');
    jest.runAllTimers();
    expect(server.object(SECRETS, 'ns', 'both')).toBeDefined();
    expect(server.object(SECRETS, 'ns', 'held')?.metadata.deletionTimestamp).toEqual(expect.any(String));
    server.remove(THINGS, 'ns', 'b');
    jest.runAllTimers();
    expect(server.object(SECRETS, 'ns', 'both')).toBeUndefined();
    expect(server.object(SECRETS, 'ns', 'held')).toBeDefined();
  });

  it('deletes an object stored after its owner was gone, at the next deletion of anything', () => {
    const a = server.seed(THINGS, { metadata: { name: 'a', namespace: 'ns' } });
    server.remove(THINGS, 'ns', 'a');
    server.seed(SECRETS, { metadata: { name: 'late', namespace: 'ns', ownerReferences: ownedBy(a) } });
    server.seed(SECRETS, { metadata: { name: 'other', namespace: 'ns' } });
    server.remove(SECRETS, 'ns', 'other');
    jest.runAllTimers();
    expect(server.object(SECRETS, 'ns', 'late')).toBeUndefined();
  });

  it('wakes no collection for a deletion that leaves nothing to collect', () => {
    const a = server.seed(THINGS, { metadata: { name: 'a', namespace: 'ns' } });
    server.seed(SECRETS, { metadata: { name: 'child', namespace: 'ns', ownerReferences: ownedBy(a) } });
    server.seed(SECRETS, { metadata: { name: 'unowned', namespace: 'ns' } });
    server.remove(SECRETS, 'ns', 'unowned');
    server.remove(SECRETS, 'ns', 'child');
    expect(jest.getTimerCount()).toBe(0);
    // An owner whose dependent went first names nothing any more.
    server.remove(THINGS, 'ns', 'a');
    expect(jest.getTimerCount()).toBe(0);
  });
});
