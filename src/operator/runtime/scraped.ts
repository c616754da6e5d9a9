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
  const own = metric.get.bind(metric) as () => Promise<object>;
  (metric as { get: () => Promise<object> }).get = async () => ({ ...(await own()), values: [...source()] });
  return metric;
}
