/**
 * The consumer handoff's two annotations, and Stakater Reloader's, as the handoff reads them.
 *
 * - {@link OPT_IN} on a workload (Deployment, StatefulSet, DaemonSet) names the delivered Secrets it consumes, comma
 *   separated, as Reloader's `secret.reloader.stakater.com/reload` does: `c5c3.io/rollout-on-credential-switch:
 *   "app-credentials,db-credentials"`. Only Secrets in the workload's own namespace can be meant.
 * - {@link TEMPLATE_GENERATIONS} on the workload's pod template records, per delivered Secret, the credential generation
 *   the workload was last rolled to: `c5c3.io/credential-generations: "app-credentials=3,db-credentials=2"`. Writing it
 *   changes the pod template, so the workload's controller rolls the pods as `kubectl rollout restart` does; writing
 *   the generation rather than a time makes a second write of the same generation a no-op.
 */

/** The workload annotation that opts it in: the delivered Secrets (comma separated) whose switch rolls it. */
export const OPT_IN = 'c5c3.io/rollout-on-credential-switch';

/** The pod-template annotation carrying, per delivered Secret, the generation the pods were rolled to. */
export const TEMPLATE_GENERATIONS = 'c5c3.io/credential-generations';

/** A Kubernetes object name (a DNS subdomain), as a Secret's name is. */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The Secrets an opt-in annotation value names: comma separated, blanks around names ignored, each a valid Secret
 * name, each once, sorted. A value that names none (empty, only commas, only invalid names) opts in for nothing.
 */
export function optedInSecrets(value: string | undefined): string[] {
  if (value === undefined) return [];
  const names = value.split(',').map((s) => s.trim()).filter((s) => SECRET_NAME.test(s));
  return [...new Set(names)].sort();
}

/** The Secrets a workload's annotations opt it in for (see {@link optedInSecrets}). */
export function optInOf(annotations: Readonly<Record<string, string>> | undefined): string[] {
  return optedInSecrets(annotations?.[OPT_IN]);
}

/**
 * The generations a pod-template annotation value records, by Secret. Entries that are not `<secret>=<positive
 * integer>` are ignored here and dropped when the value is rewritten.
 */
export function templateGenerations(value: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of (value ?? '').split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*(\d{1,15})\s*$/.exec(entry);
    if (!match || !SECRET_NAME.test(match[1])) continue;
    const generation = Number(match[2]);
    if (generation >= 1) out.set(match[1], generation);
  }
  return out;
}

/** The pod-template annotation value with `secret` at `generation` and every other valid entry kept, sorted by Secret. */
export function withGeneration(value: string | undefined, secret: string, generation: number): string {
  const generations = templateGenerations(value);
  generations.set(secret, generation);
  return [...generations.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, g]) => `${name}=${g}`)
    .join(',');
}

/** Stakater Reloader's workload annotations that make it roll a workload when a Secret it consumes changes. */
export const RELOADER = {
  /** Every ConfigMap and Secret the workload references. */
  auto: 'reloader.stakater.com/auto',
  /** Every Secret the workload references. */
  secretAuto: 'secret.reloader.stakater.com/auto',
  /** The Secrets named (comma separated). */
  secretReload: 'secret.reloader.stakater.com/reload',
} as const;

/**
 * The Reloader annotation under which Reloader would also roll the workload when `secret` changes, if Reloader is
 * installed: `auto` or `secret auto` set to "true" (the workload consumes the Secret, or it would not have opted in), or
 * `secret reload` naming it. Undefined when none does.
 */
export function reloaderCovering(annotations: Readonly<Record<string, string>> | undefined, secret: string): string | undefined {
  if (!annotations) return undefined;
  if (annotations[RELOADER.auto]?.trim().toLowerCase() === 'true') return RELOADER.auto;
  if (annotations[RELOADER.secretAuto]?.trim().toLowerCase() === 'true') return RELOADER.secretAuto;
  if (optedInSecrets(annotations[RELOADER.secretReload]).includes(secret)) return RELOADER.secretReload;
  return undefined;
}
