/**
 * Whether two recorded values hold the same fields, whatever order their keys were written in: an API server returns an
 * object with its keys sorted, and `decide` builds one in the order its rules set the fields. Compared as they are, a
 * converged order would write its unchanged status on every pass (a no-op PATCH, yet an API write, and a pass that never
 * counts as converged), and no order would ever count as settled.
 */

/** JSON with every object's keys sorted (arrays keep their order). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Whether `a` and `b` hold the same fields and values (see the module comment). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
