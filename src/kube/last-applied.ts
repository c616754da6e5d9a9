/**
 * Drops the value of `kubectl apply`'s last-applied annotation from a JSON reply while its bytes arrive, before any of
 * it becomes a string. The annotation is a copy of the object as it was applied: on a Secret made with a client-side
 * `kubectl apply` (by hand, by Argo CD, by a CI job) it holds the Secret's data, and it is part of the metadata, so
 * the metadata-only view of such Secrets carries it too. Nothing the operator does reads it; without this filter a
 * page of 100 such Secrets of 100 KiB was 14 MB of text and 14 MB of parsed strings, held at once.
 *
 * Why by hand: no JSON library drops one key while streaming without parsing everything else into objects. The filter
 * needs no parser: in valid JSON the bytes `"kubectl.kubernetes.io/last-applied-configuration":"` can only be that key
 * followed by the opening quote of its string value (inside any string a `"` is escaped as `\"`, and after a string
 * only a key is followed by `:`), and the value ends at the first `"` not escaped by a `\`. Bytes of multi-byte UTF-8
 * characters are all ≥ 0x80, so they are never taken for either. The value becomes `""`.
 */

/** The key, and the opening quote of its value, as bytes. */
const KEY = Buffer.from('"kubectl.kubernetes.io/last-applied-configuration":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class LastAppliedFilter {
  /** How many bytes of {@link KEY} the bytes passed so far end with (a key cut between two chunks). */
  private matched = 0;
  /** Inside the value being dropped. */
  private skipping = false;
  /** Inside the value, and the next byte is escaped by a `\`. */
  private escaped = false;

  /**
   * The bytes of `chunk` to keep: copies, so the chunk (mostly a dropped value, maybe) is not held by them. The search
   * runs on `Buffer.indexOf` (native); only a key or an escape cut between two chunks is followed byte by byte.
   */
  push(input: Uint8Array): Uint8Array[] {
    const chunk = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const n = chunk.length;
    const kept: Uint8Array[] = [];
    let from = 0;
    let i = 0;
    while (i < n) {
      if (this.skipping) {
        const quote = chunk.indexOf(QUOTE, i);
        if (quote < 0) {
          this.escaped = escapedAfter(chunk, i, n, this.escaped);
          i = n;
          from = n;
          break;
        }
        const escaped = escapedAfter(chunk, i, quote, this.escaped);
        this.escaped = false;
        i = quote + 1;
        if (escaped) continue;
        this.skipping = false;
        from = quote; // the closing quote is kept
        continue;
      }
      if (this.matched > 0) {
        while (i < n && this.matched > 0 && this.matched < KEY.length) {
          if (chunk[i] === KEY[this.matched]) {
            this.matched++;
            i++;
          } else this.matched = 0; // this byte is searched again below
        }
        if (this.matched === KEY.length) {
          this.matched = 0;
          kept.push(Buffer.from(chunk.subarray(from, i)));
          this.skipping = true;
          continue;
        }
        if (this.matched > 0) break; // the chunk ended inside the key
      }
      const key = chunk.indexOf(KEY, i);
      if (key >= 0) {
        i = key + KEY.length;
        kept.push(Buffer.from(chunk.subarray(from, i)));
        this.skipping = true;
        continue;
      }
      this.matched = startOfKey(chunk, Math.max(i, n - KEY.length + 1), n);
      i = n;
    }
    if (!this.skipping && from < n) kept.push(Buffer.from(chunk.subarray(from, n)));
    return kept;
  }
}

/**
 * Whether the byte at `end` is escaped, given whether the one at `start` is: a `\` escapes the next byte unless it is
 * escaped itself, so what counts is the run of `\` right before `end` (and, when the run reaches back to `start`, the
 * state there).
 */
function escapedAfter(chunk: Buffer, start: number, end: number, escapedAtStart: boolean): boolean {
  let run = 0;
  while (end - run - 1 >= start && chunk[end - run - 1] === BACKSLASH) run++;
  const odd = run % 2 === 1;
  return end - run === start ? escapedAtStart !== odd : odd;
}

/** The length of the longest end of `chunk[from, to)` that begins {@link KEY} (0 when none). */
function startOfKey(chunk: Buffer, from: number, to: number): number {
  for (let at = chunk.indexOf(QUOTE, from); at >= 0 && at < to; at = chunk.indexOf(QUOTE, at + 1)) {
    if (chunk.subarray(at, to).equals(KEY.subarray(0, to - at))) return to - at;
  }
  return 0;
}

/** The text of `chunks` (UTF-8) without the last-applied annotation's values. */
export async function textWithoutLastApplied(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const filter = new LastAppliedFilter();
  const kept: Uint8Array[] = [];
  for await (const chunk of chunks) kept.push(...filter.push(chunk));
  return Buffer.concat(kept).toString('utf8');
}
