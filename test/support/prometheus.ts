/**
 * The Prometheus pieces of the test environment:
 *
 * - `promtool` (no process): the binary, built from the Go module proxy like the other programs, for `promtool check
 *   rules` and `promtool test rules`. Exports KAC_PROMTOOL (its path).
 * - `prometheus`: a real Prometheus server on 127.0.0.1 with a free port, scraping every second and evaluating rules
 *   every second, that reads its scrape configurations from `scrape/*.yaml` and its rule files from `rules/*.yaml` in its
 *   work dir: a test writes them (the scrape configuration docs/operator.md shows, the rules `keystone-appcred alerts`
 *   prints) and calls {@link reloadPrometheus}. Exports KAC_PROMETHEUS_URL, KAC_PROMETHEUS_SCRAPE_DIR,
 *   KAC_PROMETHEUS_RULES_DIR.
 *
 * Helpers for the tests: {@link reloadPrometheus}, {@link promQuery}, {@link promAlerts}, {@link promRules},
 * {@link promTargets}, all through Prometheus's HTTP API.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinary } from './binaries';
import type { Starter } from './components';
import { freePort, progress, startServer, tail, waitUntil } from './proc';

/** The interval of scrapes and rule evaluations: seconds, so an alert's `for:` of seconds fires within seconds. */
export const PROMETHEUS_INTERVAL = '1s';

export const preparePromtool: Starter = async () => {
  const promtool = resolveBinary('promtool');
  progress(`promtool from ${promtool.source}: ${promtool.path}`);
  return { env: { KAC_PROMTOOL: promtool.path }, logs: [], stop: async () => undefined };
};

export const startPrometheus: Starter = async (workDir) => {
  const prometheus = resolveBinary('prometheus');
  progress(`prometheus from ${prometheus.source}: ${prometheus.path}`);
  const scrapeDir = join(workDir, 'scrape');
  const rulesDir = join(workDir, 'rules');
  for (const dir of [scrapeDir, rulesDir, join(workDir, 'data')]) mkdirSync(dir, { recursive: true });
  const config = join(workDir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      `  scrape_interval: ${PROMETHEUS_INTERVAL}`,
      `  scrape_timeout: ${PROMETHEUS_INTERVAL}`,
      `  evaluation_interval: ${PROMETHEUS_INTERVAL}`,
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
    env: { KAC_PROMETHEUS_URL: url, KAC_PROMETHEUS_SCRAPE_DIR: scrapeDir, KAC_PROMETHEUS_RULES_DIR: rulesDir },
    logs: [log],
    stop: async () => {
      const peak = server.peakRssKiB();
      await server.stop();
      progress(`prometheus stopped; peak RSS ${Math.round(peak / 1024)}MiB`);
    },
  };
};

const base = () => {
  const url = process.env.KAC_PROMETHEUS_URL;
  if (!url) throw new Error('KAC_PROMETHEUS_URL is not set: the test file needs `@needs prometheus`');
  return url;
};

/** Makes Prometheus read its configuration, scrape configurations and rule files again; throws with its words when it refuses them. */
export async function reloadPrometheus(): Promise<void> {
  const res = await fetch(`${base()}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`prometheus refused the reload: ${res.status} ${await res.text()}`);
}

/** One sample of an instant query's result. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

async function api<T>(path: string, params: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${base()}/api/v1/${path}${Object.keys(params).length ? `?${new URLSearchParams(params).toString()}` : ''}`, { signal: AbortSignal.timeout(30_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`prometheus /api/v1/${path} ${JSON.stringify(params)}: ${body.error ?? res.status}`);
  return body.data;
}

/** An instant query now; an expression Prometheus refuses throws with its error. */
export async function promQuery(expr: string): Promise<PromSample[]> {
  const data = await api<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] | [number, string] }>('query', { query: expr });
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

/** The alerts pending or firing now. */
export async function promAlerts(): Promise<PromAlert[]> {
  return (await api<{ alerts: PromAlert[] }>('alerts')).alerts;
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

/** The scrape targets and their health. */
export async function promTargets(): Promise<{ labels: Record<string, string>; health: string; lastError: string; scrapeUrl: string }[]> {
  return (await api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string; scrapeUrl: string }[] }>('targets')).activeTargets;
}
