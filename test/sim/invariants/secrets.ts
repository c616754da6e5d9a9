/**
 * No secret in any log line, Event, status or metric: every password, credential secret and token Keystone holds or
 * issued, every parked secret and the OpenBao token, looked for in every log line of every process, every Event, every
 * status any object carried, and the leader's metrics (sampled every ten virtual minutes and at the end). The texts are
 * scanned as they come against the secrets known then, and all of them again at the end against every secret of the
 * run (a password may be logged before Keystone knows it).
 */
import type { Invariant } from '../model';
import { PATHS, unbase64 } from '../objects';
import { OPENBAO_TOKEN } from '../process';

const METRICS_EVERY_MS = 600_000;
/** The keys of Secrets whose values are secrets: a parked secret, a delivered one, a user's password. */
const SECRET_KEYS = ['value', 'application_credential_secret', 'password'] as const;

export const noSecretLeaks: Invariant = {
  name: 'no-secret-anywhere',
  description: 'no secret in any log line, Event, status or metric',
  watch(world, report) {
    const texts: { source: string; text: string }[] = [];
    const parked = new Set<string>();
    world.hooks.line.push((line) => texts.push({ source: `a log line of ${line.process} (${line.msg})`, text: JSON.stringify(line) }));
    world.hooks.change.push((change) => {
      const what = `${change.object.kind ?? change.collection} ${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      if (change.collection === PATHS.events) texts.push({ source: `the Event ${what}`, text: JSON.stringify(change.object) });
      else if (change.collection === PATHS.secrets) {
        // What the operator writes (a tenant's edit may put anything in those keys: an id is no secret).
        if (change.fieldManager !== 'keystone-appcred-operator') return;
        const data = (change.object.data as Record<string, string> | undefined) ?? {};
        for (const key of SECRET_KEYS) if (data[key]) parked.add(unbase64(data[key]));
      } else if (change.object.status !== undefined) texts.push({ source: `the status of ${what}`, text: JSON.stringify(change.object.status) });
    });
    const known = () => new Set([...world.keystone.secrets(), OPENBAO_TOKEN, ...parked].filter((s) => s.length >= 12));
    const scanned = { texts: 0, metricsAt: 0 };
    const reported = new Set<string>();
    const scan = (items: readonly { source: string; text: string }[], secrets: ReadonlySet<string>) => {
      for (const item of items) {
        for (const secret of secrets) {
          if (!item.text.includes(secret) || reported.has(item.source)) continue;
          reported.add(item.source);
          report(`${item.source} carries a secret (${secret.length} characters, starting ${secret.slice(0, 3)}…)`);
        }
      }
    };
    const metrics = async () => {
      const leader = world.leader;
      if (leader) texts.push({ source: `the metrics of ${leader.name}`, text: await leader.metrics.text() });
    };
    return {
      async check() {
        if (world.time.now() - scanned.metricsAt >= METRICS_EVERY_MS) {
          scanned.metricsAt = world.time.now();
          await metrics();
        }
        scan(texts.slice(scanned.texts), known());
        scanned.texts = texts.length;
      },
      async final() {
        await metrics();
        scan(texts, known());
      },
    };
  },
};
