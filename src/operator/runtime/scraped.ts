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
import { Counter, Gauge, type CounterConfiguration, type GaugeConfiguration } from 'prom-client';

/** One series of a family: its labels and its value. */
export interface Series<T extends string> {
  readonly labels: Partial<Record<T, string>>;
  readonly value: number;
}

/** What a family reads its series from, on each scrape. */
export type SeriesSource<T extends string> = () => Iterable<Series<T>>;

/** A gauge whose series are `source`'s at each scrape. Its own `set`, `inc` and `remove` are not to be used. */
export class ScrapedGauge<T extends string> extends Gauge<T> {
  constructor(
    configuration: Omit<GaugeConfiguration<T>, 'collect'>,
    private readonly source: SeriesSource<T>,
  ) {
    super(configuration);
  }

  override async get(): ReturnType<Gauge<T>['get']> {
    return { ...(await super.get()), values: [...this.source()] };
  }
}

/** A counter whose series are `source`'s at each scrape (its owner counts). Its own `inc` and `remove` are not to be used. */
export class ScrapedCounter<T extends string> extends Counter<T> {
  constructor(
    configuration: Omit<CounterConfiguration<T>, 'collect'>,
    private readonly source: SeriesSource<T>,
  ) {
    super(configuration);
  }

  override async get(): ReturnType<Counter<T>['get']> {
    return { ...(await super.get()), values: [...this.source()] };
  }
}
