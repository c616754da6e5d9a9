/**
 * The installation a simulated schedule starts from (./model.ts): its orders and how the operator and the ControlPlane
 * are set up.
 */
import type { ProcessSettings } from './process';

/** The installation a schedule starts from. */
export interface Setup {
  /** Seeds everything random in the run: `Math.random`, uids, Keystone's ids. */
  readonly seed: number;
  /** The orders that exist when the operator first starts. */
  readonly orders: readonly OrderSetup[];
  /** Replicas of the operator (one leads, the others stand by). */
  readonly replicas: 1 | 2;
  /** Roll the workloads that opted in (the consumer handoff). */
  readonly consumerHandoff: boolean;
  /** The operator's Secret access. */
  readonly secretAccess: 'cluster-wide' | 'namespaced';
  /** The ControlPlane's admin: a password, or an application credential of the admin with an expiry (issue 42). */
  readonly admin: 'password' | 'application-credential';
  /** tenant-b lives on a registered target cluster. */
  readonly targetCluster: boolean;
  /** Flags the operator's processes run with (the fleet bench's longer resync). @default none */
  readonly operatorFlags?: ProcessSettings['flags'];
  /** Each order's consumer re-reads its Secret every minute; off for a fleet of thousands (O(orders) a minute). @default true */
  readonly consumers?: boolean;
  /**
   * Keystone's capacity (issue 48's pacing): its workers and the operator's `--keystone-in-flight`. Absent (the named
   * cases written before it): Keystone answers every request at once.
   */
  readonly keystone?: KeystoneSetup;
}

/** A Keystone of finite capacity (test/support/fake-keystone/workers.ts) and the operator's ceiling on it. */
export interface KeystoneSetup {
  /** Keystone's workers at the start (an event scales them). */
  readonly workers: number;
  /** The operator's `--keystone-in-flight` (the pacing's ceiling). */
  readonly inFlight: number;
  /**
   * Orders of tenant-a beyond the setup's, `fleet-1` to `fleet-<n>`, their schedule off: a fleet that a raise of every
   * order (`raise-all`) turns into a burst of Keystone requests the pacing must hold. @default 0
   */
  readonly fleet?: number;
}

/** An order of a tenant. */
export interface OrderSetup {
  readonly tenant: 'tenant-a' | 'tenant-b';
  readonly name: string;
  /** Go durations; the interval `0s` turns the schedule off. */
  readonly interval: string;
  readonly gracePeriod: string;
}
