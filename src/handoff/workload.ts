/**
 * A workload as the handoff sees it: a Deployment, StatefulSet or DaemonSet reduced to what the rules read (its opt-in,
 * its pod template's generations, its Reloader annotations) and whether its rollout has finished, read from its status
 * the way `kubectl rollout status` does, but stricter where a finished rollout would still leave pods on the old
 * credential (a StatefulSet partition, an `OnDelete` strategy, a paused Deployment).
 */
import { TEMPLATE_GENERATIONS, optInOf, templateGenerations } from './annotations';

/** The workload kinds the handoff rolls (group `apps`, version `v1`). */
export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

/** Which workload: enough to name it in an Event and to write to it. */
export interface WorkloadRef {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** Whether a workload's rollout has finished, and if not, why (for the Warning's note). */
export type Rollout = { readonly finished: true } | { readonly finished: false; readonly why: string };

/** A workload, normalized. */
export interface Workload extends WorkloadRef {
  /** The metadata annotations (the opt-in, Reloader's). */
  readonly annotations: Readonly<Record<string, string>>;
  /** The Secrets it opted in for. */
  readonly optIn: readonly string[];
  /** The pod template's {@link TEMPLATE_GENERATIONS} annotation value, as written. */
  readonly templateValue?: string;
  /** The generations that value records, by Secret. */
  readonly generations: ReadonlyMap<string, number>;
  /** Whether the workload's controller has finished rolling out its current pod template. */
  readonly rollout: Rollout;
  /** Being deleted: left alone. */
  readonly deleting: boolean;
}

/** The raw object's fields the handoff reads (apps/v1). */
export interface RawWorkload {
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly deletionTimestamp?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: {
    readonly replicas?: number;
    readonly paused?: boolean;
    readonly updateStrategy?: { readonly type?: string; readonly rollingUpdate?: { readonly partition?: number } };
    readonly template?: { readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> } };
  };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly updatedReplicas?: number;
    readonly availableReplicas?: number;
    readonly readyReplicas?: number;
    readonly currentRevision?: string;
    readonly updateRevision?: string;
    readonly desiredNumberScheduled?: number;
    readonly updatedNumberScheduled?: number;
    readonly numberAvailable?: number;
    readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string }[];
  };
}

/** Whether `kind` is one the handoff rolls. */
export function isWorkloadKind(kind: string): kind is WorkloadKind {
  return (WORKLOAD_KINDS as readonly string[]).includes(kind);
}

/** The normalized workload of a raw Deployment, StatefulSet or DaemonSet; undefined for any other kind. */
export function workloadOf(raw: RawWorkload): Workload | undefined {
  if (!isWorkloadKind(raw.kind)) return undefined;
  const annotations = raw.metadata.annotations ?? {};
  const templateValue = raw.spec?.template?.metadata?.annotations?.[TEMPLATE_GENERATIONS];
  return {
    kind: raw.kind,
    namespace: raw.metadata.namespace ?? '',
    name: raw.metadata.name,
    ...(raw.metadata.uid !== undefined ? { uid: raw.metadata.uid } : {}),
    ...(raw.metadata.resourceVersion !== undefined ? { resourceVersion: raw.metadata.resourceVersion } : {}),
    annotations,
    optIn: optInOf(annotations),
    ...(templateValue !== undefined ? { templateValue } : {}),
    generations: templateGenerations(templateValue),
    rollout: rolloutOf(raw.kind, raw),
    deleting: raw.metadata.deletionTimestamp !== undefined,
  };
}

/**
 * Whether the controller has rolled every pod to the current pod template and they are available: it has observed the
 * template's generation, and
 * - a Deployment is not paused, has not exceeded its progress deadline, and its pods are all updated and available
 *   (`updatedReplicas` and `availableReplicas` reach `spec.replicas`, and no old pod is left: `status.replicas` is no
 *   more than `updatedReplicas`);
 * - a StatefulSet rolls with `RollingUpdate` and no partition (`OnDelete` or a partition leave pods on the old template,
 *   which `kubectl rollout status` calls finished), its pods are all updated and ready, and `currentRevision` has caught
 *   up with `updateRevision`;
 * - a DaemonSet rolls with `RollingUpdate`, and `updatedNumberScheduled` and `numberAvailable` reach
 *   `desiredNumberScheduled`.
 */
export function rolloutOf(kind: WorkloadKind, raw: RawWorkload): Rollout {
  const spec = raw.spec ?? {};
  const status = raw.status ?? {};
  const generation = raw.metadata.generation ?? 0;
  const observed = status.observedGeneration ?? 0;
  const no = (why: string): Rollout => ({ finished: false, why });
  if (kind === 'Deployment' && spec.paused) return no('its rollout is paused (spec.paused)');
  if (observed < generation) return no(`its controller has not observed generation ${generation} yet (status.observedGeneration ${observed})`);
  if (kind === 'Deployment') {
    const desired = spec.replicas ?? 1;
    const progressing = status.conditions?.find((c) => c.type === 'Progressing');
    if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') return no('its progress deadline was exceeded (ProgressDeadlineExceeded)');
    const updated = status.updatedReplicas ?? 0;
    if (updated < desired) return no(`${updated} of ${desired} replicas updated`);
    if ((status.replicas ?? 0) > updated) return no(`${(status.replicas ?? 0) - updated} old replicas are still running`);
    if ((status.availableReplicas ?? 0) < updated) return no(`${status.availableReplicas ?? 0} of ${updated} updated replicas available`);
    return { finished: true };
  }
  const strategy = spec.updateStrategy?.type ?? 'RollingUpdate';
  if (strategy !== 'RollingUpdate') return no(`its updateStrategy is ${strategy}: pods are replaced only when deleted`);
  if (kind === 'StatefulSet') {
    const desired = spec.replicas ?? 1;
    const partition = spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    if (partition > 0 && desired > 0) return no(`its rollingUpdate.partition ${partition} keeps pods on the old template`);
    const updated = status.updatedReplicas ?? 0;
    if (updated < desired) return no(`${updated} of ${desired} replicas updated`);
    if ((status.readyReplicas ?? 0) < desired) return no(`${status.readyReplicas ?? 0} of ${desired} replicas ready`);
    if (status.updateRevision !== undefined && status.currentRevision !== status.updateRevision) return no(`revision ${status.updateRevision} is not the current one yet`);
    return { finished: true };
  }
  const desired = status.desiredNumberScheduled ?? 0;
  const updated = status.updatedNumberScheduled ?? 0;
  if (updated < desired) return no(`${updated} of ${desired} scheduled pods updated`);
  if ((status.numberAvailable ?? 0) < desired) return no(`${status.numberAvailable ?? 0} of ${desired} scheduled pods available`);
  return { finished: true };
}
