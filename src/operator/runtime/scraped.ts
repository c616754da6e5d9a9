/**
 * Metric families whose series are computed when Prometheus scrapes, from state their owner keeps, rather than held
 * between scrapes by prom-client: client_golang's custom collector, the way kube-state-metrics serves one series per
 * object without storing a series per object.
 *
 * Why: prom-client keeps every series as a label object, a hash string of its labels and a value object, about 240
 * bytes each. The per-order families are seven series an order, so at 20,000 orders they held some 33 MiB of heap
 * (docs/benchmarks-operator.md, "Where the memory is"), more than the order's own cached copy. Their owner keeps one
 * small record per order instead and hands its series over on each scrape; between scrapes they are garbage. No library
 * offers this on top of prom-client's registry, whose text format, content negotiation and default metrics the operator
 * keeps using; a family here is a prom-client Gauge or Counter whose own (always empty) series are replaced at `get()`.
 */
import type { Counter, Gauge } from 'prom-client';

/** One series of a family: its labels and its value. */
export interface Series<T extends string> {
  readonly labels: Partial<Record<T, string>>;
  readonly value: number;
}

/** What a family reads its series from, on each scrape. */
export type SeriesSource<T extends string> = () => Iterable<Series<T>>;

/**
 * `metric` (a new prom-client Gauge or Counter, registered) with its series taken from `source` at each scrape. Its own
 * `set`, `inc` and `remove` are not to be used: what it held would be replaced at the scrape.
 */
export function scraped<T extends string, M extends Gauge<T> | Counter<T>>(metric: M, source: SeriesSource<T>): M {
  const own = metric.get.bind(metric) as () => Promise<{ readonly name: string }>;
  (metric as { get: () => Promise<object> }).get = async () => ({ ...(await own()), values: [...source()] });
  // The text a scrape serves: each series' line made here, once. prom-client formats a series with a dozen objects and
  // strings of its own (its label pairs, a shared-labels object per series and its entry in a WeakMap): 390 MiB of
  // garbage for the 140,000 series of 20,000 orders, a scrape every 30 s (docs/benchmarks-operator.md). The registry
  // reads `getForPromString` for the text format and `get` for everything else (its JSON); a counter keeps prom-client's
  // formatting, which names it differently in the OpenMetrics format.
  if ((metric as unknown as { type: string }).type === 'gauge') {
    (metric as unknown as { getForPromString: () => Promise<object> }).getForPromString = async () => {
      const head = await own();
      const values: { value: number; metricName: string; labels: object; sharedLabels: object }[] = [];
      for (const s of source()) values.push({ value: s.value, metricName: head.name + labelsText(s.labels), labels: NO_LABELS, sharedLabels: NO_LABELS });
      return { ...head, values };
    };
  }
  return metric;
}

/** One empty label set for every preformatted series (prom-client caches a shared set's text by its identity). */
const NO_LABELS = Object.freeze({});

/** A series' labels as the text format writes them: `{a="x",b="y"}`, values escaped as prom-client escapes them. */
export function labelsText(labels: Readonly<Record<string, string | undefined>>): string {
  let text = '';
  for (const name in labels) {
    const value = labels[name];
    if (value === undefined) continue;
    text += `${text === '' ? '{' : ','}${name}="${/[\\\n"]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : value}"`;
  }
  return text === '' ? '' : `${text}}`;
}
