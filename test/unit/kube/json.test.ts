import fc from 'fast-check';
import { applyMergePatch, jsonEqual, mergePatch } from '../../../src/kube/json';

describe('JSON helpers', () => {
  it('compare like JSON: undefined fields are absent, key order does not matter, arrays are ordered', () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: [{ x: 1 }] }, { a: [{ x: 1 }] })).toBe(true);
    expect(jsonEqual({ a: null }, {})).toBe(false);
  });

  it('build the merge patch: changed fields, null for removed ones, whole arrays, nothing for equal values', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1] }, { a: 1, b: { c: 2 }, l: [1, 2], n: 'x' })).toEqual({ b: { d: null }, l: [1, 2], n: 'x' });
    expect(mergePatch({ a: 1 }, { a: 1 })).toBeUndefined();
    expect(mergePatch(undefined, { a: 1 })).toEqual({ a: 1 });
  });

  const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  it('a merge patch applied to the source gives the target (objects without nulls)', () => {
    const noNulls = fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor")), fc.oneof(fc.integer(), fc.string(), fc.dictionary(fc.string(), fc.integer())));
    fc.assert(
      fc.property(noNulls, noNulls, (from, to) => {
        const patch = mergePatch(from, to);
        expect(jsonEqual(patch === undefined ? from : applyMergePatch(from, patch), to)).toBe(true);
      }),
    );
    fc.assert(fc.property(json, (v) => jsonEqual(v, JSON.parse(JSON.stringify(v)))));
  });
});
