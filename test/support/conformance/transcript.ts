/**
 * A conformance transcript (test/e2e/fakes-conformance.test.ts): each step's answer, or how it failed, in the terms the
 * code reads (an error's class, kind and status), so the real component's and the fake's compare.
 */

export type Transcript = [string, unknown][];

/**
 * A transcript and the `step` that appends to it: `failure` says what a thrown error is (undefined: not one the code
 * classifies, kept as its text); `normalize` turns an answer into what compares (ids and times as placeholders).
 */
export function transcript(failure: (error: unknown) => unknown, normalize: (answer: unknown) => unknown = (a) => a) {
  const out: Transcript = [];
  const step = async (name: string, call: () => Promise<unknown>): Promise<void> => {
    try {
      out.push([name, normalize(await call())]);
    } catch (error) {
      out.push([name, failure(error) ?? { thrown: String(error) }]);
    }
  };
  return { out, step };
}
