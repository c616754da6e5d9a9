/**
 * Per-order metrics of the KeystoneApplicationCredential reconciler, in the operator's registry: when each order rotates
 * next, how old its delivered credential is, and how many rotations and failures (by reason) it has seen. Labels are the
 * order's namespace and name; nothing else (no id, never a secret).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { KeystoneApplicationCredentialStatus } from '../../api';

export class CredentialMetrics {
  private readonly nextRotation: Gauge<'namespace' | 'name'>;
  private readonly lastRotation: Gauge<'namespace' | 'name'>;
  private readonly rotations: Counter<'namespace' | 'name'>;
  private readonly failures: Counter<'namespace' | 'name' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.nextRotation = new Gauge({ name: 'kac_credential_next_rotation_timestamp_seconds', help: 'When the order rotates next (status.nextRotation), Unix seconds', labelNames: ['namespace', 'name'], registers });
    this.lastRotation = new Gauge({
      name: 'kac_credential_delivered_since_timestamp_seconds',
      help: 'When the delivered credential became the delivered one (status.lastRotation), Unix seconds; its age is time() minus this',
      labelNames: ['namespace', 'name'],
      registers,
    });
    this.rotations = new Counter({ name: 'kac_credential_rotations_total', help: 'Switches to a new generation', labelNames: ['namespace', 'name'], registers });
    this.failures = new Counter({ name: 'kac_credential_failures_total', help: 'Failed passes, by condition reason', labelNames: ['namespace', 'name', 'reason'], registers });
  }

  /** Records the order's status after a pass. */
  observed(namespace: string, name: string, status: KeystoneApplicationCredentialStatus | undefined): void {
    const seconds = (t: string | undefined) => (t === undefined ? undefined : Date.parse(t) / 1000);
    const next = seconds(status?.nextRotation);
    const last = seconds(status?.lastRotation);
    if (next === undefined) this.nextRotation.remove({ namespace, name });
    else this.nextRotation.set({ namespace, name }, next);
    if (last === undefined) this.lastRotation.remove({ namespace, name });
    else this.lastRotation.set({ namespace, name }, last);
  }

  rotated(namespace: string, name: string): void {
    this.rotations.inc({ namespace, name });
  }

  failed(namespace: string, name: string, reason: string): void {
    this.failures.inc({ namespace, name, reason });
  }

  /** Drops an order's series (deleted). */
  forget(namespace: string, name: string): void {
    this.nextRotation.remove({ namespace, name });
    this.lastRotation.remove({ namespace, name });
  }
}
