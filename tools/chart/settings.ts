/**
 * The settings of the chart's values: each value classified, by synthesizing it changed once, as a scalar (only text
 * changes), a switch (objects change) or a list (tools/chart/template.ts says what each becomes).
 */
import { PRIMES, SET, deepEqual, get, isMap, probe, variantValues, type Json, type Render, type Setting } from './template';
import type { Value, Values } from './values';

/** The settings of the values: each leaf classified as scalar, switch or list by one synthesis with it changed. */
export function settingsOf(render: Render, defaults: Values, schema: { properties?: Readonly<Record<string, unknown>> }, skip: ReadonlySet<string>): Setting[] {
  const out: Setting[] = [];
  const base = render(defaults);
  const sameShape = (a: Json, b: Json): boolean => (isMap(a) && isMap(b) ? deepEqual(Object.keys(a), Object.keys(b)) && Object.keys(a).every((k) => sameShape(a[k], b[k])) : Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((v, i) => sameShape(v, b[i])) : !isMap(a) && !isMap(b) && !Array.isArray(a) && !Array.isArray(b));
  const walk = (props: Readonly<Record<string, unknown>>, path: string[]): void => {
    for (const [name, raw] of Object.entries(props)) {
      const s = raw as { type?: string; enum?: string[]; properties?: Record<string, unknown>; items?: { type?: string; properties?: Record<string, unknown> }; additionalProperties?: unknown };
      const at = [...path, name];
      if (skip.has(at.join('.'))) continue;
      const dflt = get(defaults, at);
      const index = out.length; // a probe of its own; numbers count apart, staying small (a bounded count of workers)
      const numeric = out.filter((o) => typeof o.probe === 'number').length;
      if (s.type === 'object' && s.properties) walk(s.properties, at);
      else if (s.type === 'array') {
        const fields = s.items?.properties ? Object.keys(s.items.properties) : undefined;
        out.push({ path: at, kind: 'list', members: [fields ? Object.fromEntries(fields.map((f, i) => [f, `kac-i${i}-item`])) : 'kac-i0-item'] });
      } else if (s.type === 'boolean') out.push({ path: at, kind: 'switch', members: [!dflt] });
      else if (s.type === 'object') throw new Error(`tools/chart: ${at.join('.')} is a map, which the chart cannot template yet; leave it out of the chart (tools/chart/chart.ts) or say how`);
      else if (dflt === '') out.push({ path: at, kind: 'switch', members: [SET], optional: true, probe: probe(SET, index) });
      else {
        const optional = Object.keys(props).filter((k) => get(defaults, [...path, k]) === '').map((k) => [...path, k]);
        // The first probe the construct accepts and no other value uses (a number's range may be small: 1 to 5).
        const used = new Set(out.map((o) => JSON.stringify(o.probe)));
        const candidates = s.enum ? s.enum.filter((m) => m !== dflt) : typeof dflt === 'number' ? [...PRIMES.map((_, k) => probe(dflt, numeric + k)), dflt + 1, dflt - 1, dflt * 2] : [probe(dflt, index)];
        let accepted: { value: Value; changed: readonly Json[] } | undefined;
        for (const value of candidates) {
          if (accepted || used.has(JSON.stringify(value))) continue;
          try {
            accepted = { value, changed: render(variantValues(render, defaults, at, value, optional)) };
          } catch {
            // refused by the construct: the next candidate
          }
        }
        if (!accepted) throw new Error(`tools/chart: ${at.join('.')}: the construct refuses every probe (${candidates.map((c) => JSON.stringify(c)).join(', ')}); give it one in tools/chart/settings.ts`);
        const { value, changed } = accepted;
        const leafOnly = changed.length === base.length && base.every((o, i) => sameShape(o, changed[i]));
        out.push(leafOnly ? { path: at, kind: 'scalar', probe: value } : { path: at, kind: 'switch', members: s.enum ? s.enum.filter((m) => m !== dflt) : [value as Value] });
      }
    }
  };
  walk(schema.properties ?? {}, []);
  return out;
}
