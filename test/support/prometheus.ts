/**
 * The Prometheus pieces of the test environment:
 *
 * - `promtool` (no process): the binary, built from the Go module proxy like the other programs, for `promtool check
 *   rules` and `promtool test rules`. Exports KAC_PROMTOOL (its path).
 * - `prometheus`: a real Prometheus server on 127.0.0.1 with a free port, scraping every second and evaluating rules
 *   every second, that reads its scrape configurations from `scrape/*.yaml` and its rule files from `rules/*.yaml` in its
 *   work dir: a test writes them (the scrape configuration docs/configure/alerts.md shows, the rules `keystone-appcred alerts`
 *   prints) and calls {@link reloadPrometheus}. Exports KAC_PROMETHEUS_URL, KAC_PROMETHEUS_SCRAPE_DIR,
 *   KAC_PROMETHEUS_RULES_DIR. {@link startPrometheusServer} starts another one, at another scrape interval, for a test.
 *
 * Helpers for the tests: {@link reloadPrometheus}, {@link promQuery}, {@link promAlerts}, {@link promRules},
 * {@link promTargets}, all through Prometheus's HTTP API, of the shared Prometheus or of one a test started (`url`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinary } from './binaries';
import type { Starter } from './starter';
import { freePort, progress, startServer, tail, waitUntil } from './proc';

/** The interval of scrapes and rule evaluations: seconds, so an alert's `for:` of seconds fires within seconds. */
export const PROMETHEUS_INTERVAL = '1s';

export const preparePromtool: Starter = async () => {
  const promtool = resolveBinary('promtool');
  progress(`promtool from ${promtool.source}: ${promtool.path}`);
  return { env: { KAC_PROMTOOL: promtool.path }, logs: [], stop: async () => undefined };
};

/** A Prometheus server of the tests: where it answers, where it reads its scrape configurations and rule files. */
export interface PrometheusServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its scrape configurations (`*.yaml`), read at start and on {@link reloadPrometheus}. */
  readonly scrapeDir: string;
  /** Its rule files (`*.yaml`), read the same way. */
  readonly rulesDir: string;
  readonly log: string;
  /** Stops it; its peak RSS in MiB. */
  stop(): Promise<number>;
}

/**
 * Starts a Prometheus in `workDir` on a free port of 127.0.0.1, scraping every `scrapeInterval` (its scrape timeout the
 * same, at most 10 s) and evaluating its rules every `evaluationInterval`; the run's shared one scrapes and evaluates
 * every second, a test that needs a platform team's interval (15 s, 30 s) starts one of its own.
 */
export async function startPrometheusServer(workDir: string, options: { readonly scrapeInterval?: string; readonly evaluationInterval?: string } = {}): Promise<PrometheusServer> {
  const prometheus = resolveBinary('prometheus');
  progress(`prometheus from ${prometheus.source}: ${prometheus.path}`);
  const scrapeInterval = options.scrapeInterval ?? PROMETHEUS_INTERVAL;
  const scrapeDir = join(workDir, 'scrape');
  const rulesDir = join(workDir, 'rules');
  for (const dir of [scrapeDir, rulesDir, join(workDir, 'data')]) mkdirSync(dir, { recursive: true });
  const config = join(workDir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      `  scrape_interval: ${scrapeInterval}`,
      `  scrape_timeout: ${scrapeInterval === PROMETHEUS_INTERVAL ? PROMETHEUS_INTERVAL : '10s'}`,
      `  evaluation_interval: ${options.evaluationInterval ?? PROMETHEUS_INTERVAL}`,
      'scrape_config_files:',
      `  - ${join(scrapeDir, '*.yaml')}`,
      'rule_files:',
      `  - ${join(rulesDir, '*.yaml')}`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = join(workDir, 'prometheus.log');
  const server = startServer(
    'prometheus',
    prometheus.path,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(workDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--web.enable-lifecycle', '--log.level=warn'],
    log,
    { cwd: workDir },
  );
  try {
    await waitUntil(server, 'ready', async () => (await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) })).status === 200, 60_000);
  } catch (error) {
    await server.stop();
    throw new Error(`prometheus did not become ready: ${String(error)}\n${tail(log)}`);
  }
  return {
    url,
    scrapeDir,
    rulesDir,
    log,
    stop: async () => {
      const peak = server.peakRssKiB();
      await server.stop();
      return Math.round(peak / 1024);
    },
  };
}

export const startPrometheus: Starter = async (workDir) => {
  const server = await startPrometheusServer(workDir);
  return {
    env: { KAC_PROMETHEUS_URL: server.url, KAC_PROMETHEUS_SCRAPE_DIR: server.scrapeDir, KAC_PROMETHEUS_RULES_DIR: server.rulesDir },
    logs: [server.log],
    stop: async () => progress(`prometheus stopped; peak RSS ${await server.stop()}MiB`),
  };
};

/** The Prometheus a helper asks: `url` (one a test started), else the run's shared one. */
const base = (url?: string) => {
  const shared = url ?? process.env.KAC_PROMETHEUS_URL;
  if (!shared) throw new Error('KAC_PROMETHEUS_URL is not set: the test file needs `@needs prometheus`');
  return shared;
};

/** Makes Prometheus read its configuration, scrape configurations and rule files again; throws with its words when it refuses them. */
export async function reloadPrometheus(url?: string): Promise<void> {
  const res = await fetch(`${base(url)}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`prometheus refused the reload: ${res.status} ${await res.text()}`);
}

/** One sample of an instant query's result. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

async function api<T>(path: string, params: Record<string, string> = {}, url?: string): Promise<T> {
  const res = await fetch(`${base(url)}/api/v1/${path}${Object.keys(params).length ? `?${new URLSearchParams(params).toString()}` : ''}`, { signal: AbortSignal.timeout(30_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`prometheus /api/v1/${path} ${JSON.stringify(params)}: ${body.error ?? res.status}`);
  return body.data;
}

/**
 * An instant query, now or at `time` (epoch ms), of the shared Prometheus or the one at `url`; an expression Prometheus
 * refuses throws with its error.
 */
export async function promQuery(expr: string, options: { readonly url?: string; readonly time?: number } = {}): Promise<PromSample[]> {
  const params = { query: expr, ...(options.time !== undefined ? { time: String(options.time / 1000) } : {}) };
  const data = await api<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] | [number, string] }>('query', params, options.url);
  if (data.resultType === 'scalar') return [{ metric: {}, value: Number((data.result as [number, string])[1]) }];
  return (data.result as { metric: Record<string, string>; value: [number, string] }[]).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}

/** An alert as /api/v1/alerts reports it. */
export interface PromAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly state: 'pending' | 'firing';
  readonly activeAt: string;
  readonly value: string;
}

/** The alerts pending or firing now (of the Prometheus at `url`, else the shared one). */
export async function promAlerts(url?: string): Promise<PromAlert[]> {
  return (await api<{ alerts: PromAlert[] }>('alerts', {}, url)).alerts;
}

/** An alerting rule as /api/v1/rules reports it. */
export interface PromRule {
  readonly name: string;
  readonly query: string;
  readonly health: string;
  readonly lastError?: string;
  readonly type: string;
}

/** The rules loaded, by group. */
export async function promRules(): Promise<{ name: string; rules: PromRule[] }[]> {
  return (await api<{ groups: { name: string; rules: PromRule[] }[] }>('rules')).groups;
}

/** The scrape targets and their health (of the Prometheus at `url`, else the shared one). */
export async function promTargets(url?: string): Promise<{ labels: Record<string, string>; health: string; lastError: string; scrapeUrl: string; lastScrape: string }[]> {
  return (await api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string; scrapeUrl: string; lastScrape: string }[] }>('targets', {}, url)).activeTargets;
}
