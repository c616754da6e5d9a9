/**
 * Per-order metrics of the KeystoneApplicationCredential reconciler, in the operator's registry: when each order rotates
 * next, how old its delivered credential is, and how many rotations and failures (by reason) it has seen. Labels are the
 * order's namespace and name, and `cluster` for an order on a registered target cluster (absent on the management
 * cluster's series); nothing else (no id, never a secret). A deleted order's series all go, counters included, as
 * kube-state-metrics drops a deleted object's: otherwise every order ever deleted would stay in the registry (and in
 * every scrape) for the life of the process.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { KeystoneApplicationCredentialStatus } from '../../api';

type Labels = 'namespace' | 'name' | 'cluster';

/** The labels of an order's series: `cluster` only for a target cluster's. */
const labelsOf = (namespace: string, name: string, cluster?: string) => ({ namespace, name, ...(cluster ? { cluster } : {}) });

export class CredentialMetrics {
  private readonly nextRotation: Gauge<Labels>;
  private readonly lastRotation: Gauge<Labels>;
  private readonly rotations: Counter<Labels>;
  private readonly failures: Counter<Labels | 'reason'>;
  /** The failure reasons each order has a series for (prom-client removes a series by its exact labels only). */
  private readonly reasons = new Map<string, Set<string>>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['namespace', 'name', 'cluster'] as const;
    this.nextRotation = new Gauge({ name: 'kac_credential_next_rotation_timestamp_seconds', help: 'When the order rotates next (status.nextRotation), Unix seconds', labelNames, registers });
    this.lastRotation = new Gauge({
      name: 'kac_credential_delivered_since_timestamp_seconds',
      help: 'When the delivered credential became the delivered one (status.lastRotation), Unix seconds; its age is time() minus this',
      labelNames,
      registers,
    });
    this.rotations = new Counter({ name: 'kac_credential_rotations_total', help: 'Switches to a new generation', labelNames, registers });
    this.failures = new Counter({ name: 'kac_credential_failures_total', help: 'Failed passes, by condition reason', labelNames: [...labelNames, 'reason'], registers });
  }

  /** Records the order's status after a pass (`cluster`: a target cluster's name, absent on the management cluster). */
  observed(namespace: string, name: string, status: KeystoneApplicationCredentialStatus | undefined, cluster?: string): void {
    const seconds = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t) / 1000);
    const next = seconds(status?.nextRotation);
    const last = seconds(status?.lastRotation);
    const labels = labelsOf(namespace, name, cluster);
    if (next === undefined) this.nextRotation.remove(labels);
    else this.nextRotation.set(labels, next);
    if (last === undefined) this.lastRotation.remove(labels);
    else this.lastRotation.set(labels, last);
  }

  rotated(namespace: string, name: string, cluster?: string): void {
    this.rotations.inc(labelsOf(namespace, name, cluster));
  }

  failed(namespace: string, name: string, reason: string, cluster?: string): void {
    const key = JSON.stringify([cluster ?? '', namespace, name]);
    const reasons = this.reasons.get(key) ?? new Set<string>();
    this.reasons.set(key, reasons.add(reason));
    this.failures.inc({ ...labelsOf(namespace, name, cluster), reason });
  }

  /** Drops every series of an order (deleted). */
  forget(namespace: string, name: string, cluster?: string): void {
    const labels = labelsOf(namespace, name, cluster);
    this.nextRotation.remove(labels);
    this.lastRotation.remove(labels);
    this.rotations.remove(labels);
    const key = JSON.stringify([cluster ?? '', namespace, name]);
    for (const reason of this.reasons.get(key) ?? []) this.failures.remove({ ...labels, reason });
    this.reasons.delete(key);
  }
}
