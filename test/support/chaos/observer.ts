/**
 * What the chaos run watches while it runs (./timeline.ts says what each record means): a sampler that reads every
 * order's delivered Secret, its backup, its status, its parked secrets and then the users' credentials in Keystone about
 * every second (directly, never through the operator's proxies); two consumers per order that authenticate with the
 * delivered pair every second, one re-reading the Secret each time, one every half grace period as a kubelet refreshes
 * a mounted Secret (both keep the last pair they read while the Secret cannot be read or is gone, as a mounted volume
 * does); and the leader's metrics every 15 s with the orders' conditions read just before. At the end, the operator's
 * log lines and everything the secrets scan reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { authenticateApplicationCredential, isKeystoneError, parseKeystoneTime, type KeystoneSession } from '../../../src/keystone';
import { adminSession } from '../keystone-fixtures';
import { metricsText } from '../operator';
import type { Installation } from './installation';
import { digestOf, type CredentialSeen, type LogLine, type MetricsSample, type OrderInfo, type OrderSeen, type ProbeResult, type Sample } from './timeline';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SAMPLE_MS = 1_000;
const METRICS_MS = 15_000;

export interface Observer {
  readonly samples: Sample[];
  readonly probes: ProbeResult[];
  readonly metrics: MetricsSample[];
  /** The metrics texts read (for the secrets scan). */
  readonly metricsTexts: { source: string; text: string }[];
  stop(): Promise<void>;
}

export function observe(installation: Installation, laggingRefreshMs: number): Observer {
  const samples: Sample[] = [];
  const probes: ProbeResult[] = [];
  const metrics: MetricsSample[] = [];
  const metricsTexts: { source: string; text: string }[] = [];
  const admin = adminSession();
  let running = true;
  const fxOf = (order: OrderInfo) => installation.fixtures[order.tenant];
  const nameOf = (order: OrderInfo) => order.key.split('/')[1];

  async function seeOrder(order: OrderInfo): Promise<OrderSeen | undefined> {
    const fx = fxOf(order);
    const name = nameOf(order);
    try {
      const data = await fx.delivered(name);
      const object = await fx.order(name);
      let backup: string | null | undefined;
      try {
        backup = (await fx.backup(name, object.metadata.uid as string).read()) ?? null;
      } catch {
        backup = undefined;
      }
      const parked = Object.fromEntries([...(await fx.parkedSecrets(name))].map(([g, v]) => [g, digestOf(v)]));
      const status = object.status as OrderSeen['status'];
      return {
        ...(object.metadata.generation !== undefined ? { generation: object.metadata.generation as number } : {}),
        ...(status ? { status } : {}),
        ...(data ? { delivered: { id: data.application_credential_id, ...(data.application_credential_secret ? { secret: digestOf(data.application_credential_secret) } : {}) } } : {}),
        backup,
        parked,
      };
    } catch {
      return undefined;
    }
  }

  async function credentials(session: KeystoneSession): Promise<CredentialSeen[] | undefined> {
    try {
      const out: CredentialSeen[] = [];
      for (const user of new Map(installation.orders.map((o) => [o.user.id, o.user])).values()) {
        const res = await session.request({ method: 'GET', path: session.transport.pathOf(`users/${user.id}/application_credentials`) });
        for (const c of (res.body as { application_credentials: { id: string; name: string; expires_at?: string | null }[] }).application_credentials) {
          out.push({ id: c.id, name: c.name, userId: user.id, ...(c.expires_at ? { expiresAt: parseKeystoneTime(c.expires_at)?.getTime() } : {}) });
        }
      }
      return out;
    } catch {
      return undefined;
    }
  }

  const sampler = (async () => {
    while (running) {
      const at = Date.now();
      const seen = await Promise.all(installation.orders.map(seeOrder));
      const listed = await credentials(admin);
      const orders = Object.fromEntries(installation.orders.flatMap((o, i) => (seen[i] ? [[o.key, seen[i]]] : [])));
      samples.push({ at, orders, ...(listed ? { credentials: listed } : {}) });
      await sleep(Math.max(0, SAMPLE_MS - (Date.now() - at)));
    }
  })();

  function consumer(order: OrderInfo, kind: 'fresh' | 'lagging'): Promise<void> {
    const fx = fxOf(order);
    return (async () => {
      let pair: { id?: string; secret?: string } | undefined;
      let readAt = 0;
      while (running) {
        const at = Date.now();
        if (kind === 'fresh' || at - readAt >= laggingRefreshMs) {
          try {
            const data = await fx.delivered(nameOf(order));
            if (data) pair = { id: data.application_credential_id, secret: data.application_credential_secret };
            readAt = at;
          } catch {
            // The API server does not answer: keep the last pair.
          }
        }
        if (pair?.id && pair.secret) {
          let outcome: ProbeResult['outcome'] = 'ok';
          try {
            await authenticateApplicationCredential({ authUrl: fx.env.authUrl, id: pair.id, secret: pair.secret, timeoutMs: 10_000 });
          } catch (error) {
            outcome = isKeystoneError(error, 'unauthorized', 'not-found') ? 'rejected' : 'unreachable';
          }
          // Stamped when Keystone answered: it judged the pair at or before then (the Secret's read and a queue at a busy
          // Keystone come before its check, and a refusal at a credential's expiry must not look earlier than it).
          probes.push({ at: Date.now(), order: order.key, consumer: kind, id: pair.id, secret: digestOf(pair.secret), outcome });
        }
        await sleep(Math.max(0, 1_000 - (Date.now() - at)));
      }
    })();
  }
  const consumers = installation.orders.flatMap((o) => [consumer(o, 'fresh'), consumer(o, 'lagging')]);

  const metricsLoop = (async () => {
    while (running) {
      await sleep(METRICS_MS);
      const leader = await installation.replicas.leader();
      if (!leader) continue;
      const conditions: MetricsSample['conditions'] = {};
      try {
        for (const order of installation.orders) (conditions as Record<string, unknown>)[order.key] = ((await fxOf(order).order(nameOf(order))).status as OrderSeen['status'])?.conditions;
      } catch {
        continue;
      }
      const at = Date.now();
      const text = await metricsText(leader);
      if (!text) continue;
      metricsTexts.push({ source: `the metrics of ${leader.name} at ${new Date(at).toISOString()}`, text });
      const series: Record<string, number> = {};
      for (const m of text.matchAll(/^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)$/gm)) series[m[1]] = Number(m[2]);
      metrics.push({ at, process: leader.name, series, conditions });
    }
  })();

  return {
    samples,
    probes,
    metrics,
    metricsTexts,
    async stop() {
      running = false;
      await Promise.all([sampler, metricsLoop, ...consumers]);
    },
  };
}

/** Every JSON line of the replicas' logs, with the replica that wrote it and its time. */
export function operatorLines(installation: Installation, names: readonly string[]): LogLine[] {
  const out: LogLine[] = [];
  for (const name of names) {
    let text = '';
    try {
      text = readFileSync(join(installation.logDir, `${name}.log`), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        out.push({ ...parsed, process: name, at: Date.parse(String(parsed.time)), msg: String(parsed.msg) });
      } catch {
        // a line cut by a SIGKILL
      }
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The operator's log texts (for the secrets scan). */
export function logTexts(installation: Installation, names: readonly string[]): { source: string; text: string }[] {
  return names.map((name) => {
    try {
      return { source: `operator log ${name}.log`, text: readFileSync(join(installation.logDir, `${name}.log`), 'utf8') };
    } catch {
      return { source: `operator log ${name}.log`, text: '' };
    }
  });
}
