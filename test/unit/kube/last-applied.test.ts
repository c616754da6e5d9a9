import fc from 'fast-check';
import { LastAppliedFilter, textWithoutLastApplied } from '../../../src/kube/last-applied';

const KEY = 'kubectl.kubernetes.io/last-applied-configuration';

/** The bytes of `text`, cut at `cuts` (any byte offsets, also inside a multi-byte character). */
async function* chunked(text: string, cuts: readonly number[]): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
  yield bytes.subarray(from);
}

/** What the filter must give: the same JSON, every last-applied value emptied. */
function emptied(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(emptied);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === KEY && typeof v === 'string' ? '' : emptied(v)]));
}

/** Strings that try to fool the filter: quotes, backslashes, the key itself, its escaped form, non-ASCII. */
const tricky = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(KEY, `"${KEY}":"`, `\\"${KEY}\\":\\"`, '\\', '\\\\"', '"', 'ä€😀', `${KEY}\\`, `{"${KEY}":"x"}`),
);
const annotations = fc.dictionary(fc.oneof(fc.string(), fc.constant(KEY)), tricky);
const object = fc.record({
  apiVersion: fc.constant('meta.k8s.io/v1'),
  metadata: fc.record({ name: tricky, annotations, labels: fc.dictionary(fc.string(), tricky) }),
  other: fc.array(fc.record({ [KEY]: tricky, note: tricky })),
});

describe('LastAppliedFilter', () => {
  it('empties exactly the last-applied annotations of any JSON, however the bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(object, { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 12 }), async (items, cuts) => {
        const text = JSON.stringify({ kind: 'List', items });
        const filtered = await textWithoutLastApplied(chunked(text, cuts));
        expect(JSON.parse(filtered)).toEqual(emptied(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('finds a key and an escape cut anywhere, down to one byte per chunk', async () => {
    const text = JSON.stringify({ a: { [KEY]: 'x\\"y\\\\', b: `${KEY}\\` }, c: [{ [KEY]: '\\\\\\"ä' }, '"', { [KEY]: '' }], [KEY]: `{"${KEY}":"\\"}` });
    const expected = emptied(JSON.parse(text));
    const length = Buffer.byteLength(text);
    for (let cut = 0; cut <= length; cut++) expect(JSON.parse(await textWithoutLastApplied(chunked(text, [cut])))).toEqual(expected);
    for (let a = 0; a <= length; a += 7) for (let b = a; b <= length; b += 5) expect(JSON.parse(await textWithoutLastApplied(chunked(text, [a, b])))).toEqual(expected);
    expect(JSON.parse(await textWithoutLastApplied(chunked(text, Array.from({ length }, (_, i) => i))))).toEqual(expected);
  });

  it('keeps nothing of a large value, and holds no chunk it drops', () => {
    const value = JSON.stringify({ data: { payload: 'A'.repeat(200_000) } });
    const text = JSON.stringify({ metadata: { name: 's', annotations: { [KEY]: value, keep: 'me' } } });
    const filter = new LastAppliedFilter();
    const bytes = Buffer.from(text);
    const kept: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 16_384) kept.push(...filter.push(bytes.subarray(i, i + 16_384)));
    const out = Buffer.concat(kept).toString();
    expect(JSON.parse(out)).toEqual({ metadata: { name: 's', annotations: { [KEY]: '', keep: 'me' } } });
    expect(kept.reduce((n, k) => n + k.byteLength, 0)).toBe(out.length);
    // Copies, not views of the chunks (which hold the dropped bytes).
    expect(kept.some((k) => k.buffer === bytes.buffer)).toBe(false);
  });
});
