/** Small builders for the decide() tests: an order, a world, and readable assertions on plans. */
import { resolveSpec, type AccessRule, type KeystoneApplicationCredentialStatus, type RotationSpec } from '../../../src/api';
import type { Action, GenerationRecord, LifecycleOrder, Observations, Plan } from '../../../src/lifecycle';

export const T0 = new Date('2026-12-01T00:00:00Z');
export const at = (iso: string): Date => new Date(iso);
export const hours = (n: number): number => n * 3_600_000;
export const plus = (date: Date, ms: number): Date => new Date(date.getTime() + ms);

export function order(
  status: KeystoneApplicationCredentialStatus = {},
  spec: { credentialGeneration?: number; rotation?: RotationSpec; roles?: readonly string[]; accessRules?: readonly AccessRule[] } = {},
  extra: Partial<LifecycleOrder> = {},
): LifecycleOrder {
  return { prefix: 'app-1234abcd-applicationcredential', generation: 1, spec: resolveSpec(spec), status, secretName: 'app-credentials', ...extra };
}

/** A generation that exists everywhere: parked and in Keystone as `cred-<g>`. */
export function held(generation: number, expiresAt?: Date): GenerationRecord {
  return { generation, parked: true, credential: { id: `cred-${generation}`, ...(expiresAt ? { expiresAt } : {}) } };
}

export function world(generations: GenerationRecord[], extra: Partial<Observations> = {}): Observations {
  const live = generations.find((g) => g.credential !== undefined);
  return {
    generations,
    delivery: live?.credential ? { state: 'delivered', credentialId: live.credential.id, intact: true } : { state: 'absent' },
    ...extra,
  };
}

/** A converged status of generation `g`, minted and delivered at `last` with the default schedule. */
export function liveStatus(g: number, last: Date, expiresAt?: Date, nextRotation?: Date): KeystoneApplicationCredentialStatus {
  return {
    credentialID: `cred-${g}`,
    credentialGeneration: g,
    lastRotation: last.toISOString(),
    ...(expiresAt ? { credentialExpiresAt: expiresAt.toISOString() } : {}),
    ...(nextRotation ? { nextRotation: nextRotation.toISOString() } : {}),
  };
}

export const kinds = (plan: Plan): string[] => plan.actions.map((a) => ('generation' in a ? `${a.type}:${a.generation}` : a.type));
export const condition = (plan: Plan, type: string) => plan.status.conditions?.find((c) => c.type === type);
export const mintOf = (plan: Plan): Extract<Action, { type: 'mint' }> | undefined =>
  plan.actions.find((a): a is Extract<Action, { type: 'mint' }> => a.type === 'mint');
