/**
 * What the platform team's monitoring reads stays true: every status reason of an order has its metric series on the
 * leader (`keystone_appcred_credential_condition`), and a ControlPlane whose admin is an application credential keeps
 * the recorded expiry (`status.adminCredentialExpiresAt`) and its gauge series while the credential exists, through
 * failed logins. A mismatch counts once it has lasted two checks ten seconds apart (a pass between its status write and
 * its metrics is not one).
 */
import { ADMIN_CREDENTIAL_EXPIRY_METRIC } from '../../../src/operator/admin-credential-metrics';
import type { Invariant } from '../model';
import { Kinds } from '../../../src/kube/kinds';
import { MANAGEMENT } from '../../../src/operator/runtime/clusters';
import { CP, PATHS } from '../objects';
import type { SimWorld } from '../sim-world';

const PERSIST_MS = 10_000;
/** The series of an order's conditions (src/operator/credential/metrics.ts). */
const CONDITION_METRIC = 'keystone_appcred_credential_condition';

/** Reports a problem once it has been seen at two checks at least {@link PERSIST_MS} apart (and once only). */
function persistent(world: SimWorld, report: (message: string) => void) {
  const seen = new Map<string, number>();
  const reported = new Set<string>();
  return (current: ReadonlyMap<string, string>) => {
    const now = world.time.now();
    for (const key of [...seen.keys()]) if (!current.has(key)) seen.delete(key);
    for (const [key, message] of current) {
      const since = seen.get(key);
      if (since === undefined) seen.set(key, now);
      else if (now - since >= PERSIST_MS && !reported.has(key)) {
        reported.add(key);
        report(message);
      }
    }
  };
}

/** How long a new leader's controllers run before its series are held to the statuses (its first pass of each order). */
const WARM_MS = 30_000;

/**
 * The leader's samples of one metric, as `name{labels}` (labels in their registered order) → value; none before its
 * controllers ran their first passes. Read from its registry as a scrape would (a gauge's collect runs), one metric.
 */
async function samples(world: SimWorld, metric: string): Promise<Map<string, number> | undefined> {
  const leader = world.leader;
  const started = leader && world.controllersStarted.get(leader.name);
  if (!leader || started === undefined || world.time.now() - started < WARM_MS) return undefined;
  const out = new Map<string, number>();
  const found = await leader.metrics.registry.getSingleMetric(metric)?.get();
  for (const { labels, value } of found?.values ?? []) out.set(`${metric}{${Object.entries(labels).map(([k, v]) => `${k}="${String(v)}"`).join(',')}}`, value);
  return out;
}

export const reasonSeries: Invariant = {
  name: 'status-reasons-have-series',
  description: 'every status reason has its metric series',
  watch(world, report) {
    const problem = persistent(world, report);
    return {
      async check() {
        const metrics = await samples(world, CONDITION_METRIC);
        if (!metrics) return;
        const missing = new Map<string, string>();
        const leader = world.leader;
        // The statuses the leader can read and act on: its caches of each cluster it reaches (an unreachable cluster's
        // orders get no pass, and their series wait for it: its own alert says so).
        for (const cluster of [MANAGEMENT, ...(leader?.manager.targetClusters() ?? [])].filter((c) => leader?.manager.connected(c))) {
          for (const order of leader?.manager.clusterNamed(cluster)?.list(Kinds.KeystoneApplicationCredential) ?? []) {
            const ns = order.metadata.namespace ?? '';
            for (const c of (order.status?.conditions ?? []).filter((x) => ['Ready', 'CredentialReady', 'DeliveryReady'].includes(x.type))) {
              const labels = `namespace="${ns}",name="${order.metadata.name}",${cluster ? `cluster="${cluster}",` : ''}type="${c.type}",status="${c.status}",reason="${c.reason}"`;
              if (metrics.get(`${CONDITION_METRIC}{${labels}}`) !== 1) missing.set(`${cluster}/${ns}/${order.metadata.name}/${c.type}/${c.reason}`, `${ns}/${order.metadata.name}: its ${c.type} condition says ${c.status}/${c.reason} and the leader exports no such series`);
            }
          }
        }
        problem(missing);
      },
    };
  },
};

export const adminExpiryKept: Invariant = {
  name: 'admin-expiry-kept',
  description: "a ControlPlane keeps its admin credential's recorded expiry, and its series, through failed logins",
  watch(world, report) {
    const problem = persistent(world, report);
    let recorded = false;
    return {
      async check() {
        const credential = world.adminCredential;
        if (!credential || !world.keystone.credentials.has(credential.id)) return;
        const cp = world.management.object(PATHS.controlPlanes, CP.namespace, CP.name);
        const at = (cp?.status as { adminCredentialExpiresAt?: string } | undefined)?.adminCredentialExpiresAt;
        recorded ||= at !== undefined;
        if (!recorded) return;
        const issues = new Map<string, string>();
        if (at === undefined || Math.abs(Date.parse(at) - credential.expiresAt.getTime()) > 1000) issues.set('status', `the ControlPlane's status.adminCredentialExpiresAt is ${at ?? 'gone'}; the admin credential expires ${credential.expiresAt.toISOString()}`);
        const metrics = await samples(world, ADMIN_CREDENTIAL_EXPIRY_METRIC);
        if (metrics && metrics.get(`${ADMIN_CREDENTIAL_EXPIRY_METRIC}{namespace="${CP.namespace}",name="${CP.name}"}`) === undefined) issues.set('series', `the leader exports no ${ADMIN_CREDENTIAL_EXPIRY_METRIC} series for the ControlPlane`);
        problem(issues);
      },
    };
  },
};
