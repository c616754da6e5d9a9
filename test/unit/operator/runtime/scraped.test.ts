import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { exposition, labelsText, scraped, type Series } from '../../../../src/operator/runtime/scraped';

/** Series with label values that need every escape of the text format, and one without a label the family names. */
const SERIES: Series<'namespace' | 'name' | 'cluster'>[] = [
  { labels: { namespace: 'team-a', name: 'db' }, value: 1_796_000_000.5 },
  { labels: { namespace: 'team-b', name: 'quote"back\\slash\nline', cluster: 'east' }, value: 0 },
  { labels: { namespace: 'team-c', name: 'inf' }, value: Number.POSITIVE_INFINITY },
  { labels: { namespace: 'team-c', name: 'neg' }, value: -3 },
];

/** The text prom-client itself writes for `series` set on a plain family of that kind. */
async function reference(kind: 'gauge' | 'counter', series: readonly Series<string>[]): Promise<string> {
  const registry = new Registry();
  const labelNames = ['namespace', 'name', 'cluster'];
  if (kind === 'gauge') {
    const g = new Gauge({ name: 'x_gauge', help: 'help', labelNames, registers: [registry] });
    for (const s of series) g.set(s.labels, s.value);
  } else {
    const c = new Counter({ name: 'x_total', help: 'help', labelNames, registers: [registry] });
    for (const s of series) c.inc(s.labels, s.value);
  }
  return registry.metrics();
}

describe('scraped families', () => {
  it('serve, for a gauge, the text prom-client writes for the same series (escapes, label order, +Inf), made from the source at each scrape', async () => {
    const registry = new Registry();
    let series = SERIES;
    scraped(new Gauge({ name: 'x_gauge', help: 'help', labelNames: ['namespace', 'name', 'cluster'], registers: [registry] }), () => series);
    expect(await registry.metrics()).toBe(await reference('gauge', SERIES));
    series = SERIES.slice(0, 1);
    expect(await registry.metrics()).toBe(await reference('gauge', series));
    series = [];
    expect(await registry.metrics()).toBe(await reference('gauge', []));
  });

  it('keep prom-client\'s own formatting for a counter, and every series with its labels in the JSON', async () => {
    const registry = new Registry();
    const positive = SERIES.filter((s) => s.value >= 0 && Number.isFinite(s.value));
    scraped(new Counter({ name: 'x_total', help: 'help', labelNames: ['namespace', 'name', 'cluster'], registers: [registry] }), () => positive);
    expect(await registry.metrics()).toBe(await reference('counter', positive));
    const json = await registry.getMetricsAsJSON();
    expect(json[0]?.values.map((v) => v.labels)).toEqual(positive.map((s) => s.labels));
  });

  it('write a label set as the text format does: none is empty, undefined values are left out', () => {
    expect(labelsText({})).toBe('');
    expect(labelsText({ a: 'x', b: undefined, c: 'y"z' })).toBe('{a="x",c="y\\"z"}');
  });

  it('write the whole registry in pieces that join to what prom-client writes, the per-order gauges a few hundred lines a piece', async () => {
    const registry = new Registry();
    const many: Series<'namespace' | 'name'>[] = Array.from({ length: 1_234 }, (_, i) => ({ labels: { namespace: `ns-${i % 7}`, name: `order-${i}` }, value: i / 3 }));
    const plain = new Gauge({ name: 'plain_gauge', help: 'a help with a \\ backslash\nand a line', labelNames: ['kind'], registers: [registry] });
    plain.set({ kind: 'A' }, 1);
    scraped(new Gauge({ name: 'per_order', help: 'per order', labelNames: ['namespace', 'name'], registers: [registry] }), () => many);
    scraped(new Gauge({ name: 'per_order_empty', help: 'none \\ yet\n', labelNames: ['namespace', 'name'], registers: [registry] }), () => []);
    scraped(new Counter({ name: 'per_order_total', help: 'counted', labelNames: ['namespace', 'name'], registers: [registry] }), () => many.slice(0, 3));
    new Histogram({ name: 'durations', help: 'seconds', labelNames: ['kind'], registers: [registry] }).observe({ kind: 'A' }, 0.2);
    const pieces: string[] = [];
    for await (const piece of exposition(registry)) pieces.push(piece);
    expect(pieces.join('')).toBe(await registry.metrics());
    expect(Math.max(...pieces.map((p) => p.split('\n').length))).toBeLessThanOrEqual(501);
    expect(pieces.filter((p) => p.includes('per_order{')).length).toBe(3);
  });
});

