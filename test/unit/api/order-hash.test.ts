/**
 * src/api/naming.ts `orderHash`: the 8 hex digits of sha256(`<cluster>/<namespace>/<name>`) in every child name, kept
 * in two generations so that the objects that exist are hashed once however many there are.
 */
import { createHash } from 'node:crypto';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, createHash: jest.fn(actual.createHash) };
});

import { childPrefix, orderHash } from '../../../src/api/naming';

const hashed = createHash as jest.MockedFunction<typeof createHash>;
const sha = (input: string) => jest.requireActual<typeof import('node:crypto')>('node:crypto').createHash('sha256').update(input).digest('hex').slice(0, 8);

describe('orderHash', () => {
  it('is the first 8 hex digits of sha256(cluster/namespace/name)', () => {
    expect(orderHash({ namespace: 'team-a', name: 'app' })).toBe(sha('/team-a/app'));
    expect(orderHash({ cluster: 'edge-1', namespace: 'team-a', name: 'app' })).toBe(sha('edge-1/team-a/app'));
    expect(childPrefix({ namespace: 'team-a', name: 'app' })).toBe(`app-${sha('/team-a/app')}-applicationcredential`);
  });

  it('resyncs of 24,000 objects (20,000 orders, their users and assignments) hash each once, not on every pass', () => {
    const names = Array.from({ length: 24_000 }, (_, i) => ({ namespace: 'fleet', name: `o${i}` }));
    hashed.mockClear();
    for (const location of names) orderHash(location);
    expect(hashed).toHaveBeenCalledTimes(24_000);
    hashed.mockClear();
    for (let resync = 0; resync < 3; resync++) for (const location of names) orderHash(location);
    expect(hashed).toHaveBeenCalledTimes(0); // a single map emptied at 20,000 hashed nearly all of them again each time
    expect(orderHash(names[23_999])).toBe(sha('/fleet/o23999'));
  });

  it('names gone for good fall out: after 100,000 others, the first is hashed anew (and the same)', () => {
    const first = { namespace: 'churn', name: 'first' };
    const hash = orderHash(first);
    for (let i = 0; i < 100_000; i++) orderHash({ namespace: 'churn', name: `n${i}` });
    hashed.mockClear();
    expect(orderHash(first)).toBe(hash);
    expect(hashed).toHaveBeenCalledTimes(1);
  });
});
