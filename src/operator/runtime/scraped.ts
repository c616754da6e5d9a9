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
import { Registry, type Counter, type Gauge } from 'prom-client';

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
  // reads `getForPromString` for its text (`registry.metrics()`, which `OperatorMetrics.text()` returns) and `get` for
  // everything else (its JSON); a counter keeps prom-client's formatting there, which names it differently in the
  // OpenMetrics format. What `/metrics` serves is `textChunks` below, through `exposition`.
  if ((metric as unknown as { type: string }).type === 'gauge') {
    (metric as unknown as { getForPromString: () => Promise<object> }).getForPromString = async () => {
      const head = await own();
      const values: { value: number; metricName: string; labels: object; sharedLabels: object }[] = [];
      for (const s of source()) values.push({ value: s.value, metricName: head.name + labelsText(s.labels), labels: NO_LABELS, sharedLabels: NO_LABELS });
      return { ...head, values };
    };
  }
  // The same text in pieces of a few hundred lines, for a response written as it is made ({@link exposition}, which
  // serves the Prometheus format this way only: there a counter's name is its own).
  const { name, help, type } = metric as unknown as { name: string; help: string; type: 'gauge' | 'counter' };
  (metric as unknown as Chunked).textChunks = function* () {
    yield `# HELP ${name} ${escapeText(help)}\n# TYPE ${name} ${type}`;
    let chunk = '';
    let lines = 0;
    for (const s of source()) {
      chunk += `\n${name}${labelsText(s.labels)} ${valueText(s.value)}`;
      if (++lines === CHUNK_LINES) {
        yield chunk;
        [chunk, lines] = ['', 0];
      }
    }
    if (chunk !== '') yield chunk;
  };
  return metric;
}

/** Lines of a family in one piece of a response written as it is made. */
const CHUNK_LINES = 500;

/** A family that writes its text in pieces. */
interface Chunked {
  textChunks: () => Iterable<string>;
}

/**
 * The registry's text exposition in pieces, each handed over before the next is made: what `registry.metrics()`
 * returns, character for character, without one string of all of it. At 20,000 orders that string is 16 MB, a large
 * object V8 frees only in a full collection (with the families' own strings, twice that after every scrape). The
 * per-order gauges come in pieces of {@link CHUNK_LINES} lines; every other family as prom-client writes it. The
 * OpenMetrics format (which names counters differently) is served whole, from prom-client.
 */
export async function* exposition(registry: Registry): AsyncGenerator<string> {
  if (registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) {
    yield await registry.metrics();
    return;
  }
  let first = true;
  for (const metric of registry.getMetricsAsArray()) {
    if (!first) yield '\n\n';
    first = false;
    const chunked = (metric as unknown as Partial<Chunked>).textChunks;
    if (chunked) yield* chunked();
    // prom-client's own text of one family: the method `metrics()` joins, not in its typings (a unit test holds the two equal).
    else yield await (registry as unknown as { getMetricsAsString: (m: unknown) => Promise<string> }).getMetricsAsString(metric);
  }
  yield '\n';
}

/** A help text as the text format escapes it (prom-client's way). */
const escapeText = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** A sample value as prom-client writes it (its spelling of NaN included). */
const valueText = (value: number): string => (Number.isNaN(value) ? 'Nan' : value === Infinity ? '+Inf' : value === -Infinity ? '-Inf' : `${value}`);

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
