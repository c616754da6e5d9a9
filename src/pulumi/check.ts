/**
 * Pulumi's `check`: the defaults, the CRD's rules (src/api/validation.ts) and the text inputs' rules (input-rules.ts),
 * with no Keystone or OpenBao call; values not known yet (preview) pass. Both faces run it: the dynamic resource and the
 * provider plugin.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_CREDENTIAL_GENERATION, DEFAULT_GRACE_PERIOD, DEFAULT_INTERVAL, validate, type AccessRule, type DeletionPolicy, type SecretTemplate } from '../api';
import { connectionProblems, resolveConnection } from './connection';
import type { ConnectionSettings } from './settings';
import { deliveryInputProblems } from './delivery-inputs';
import { CLOUD_NAME_RULE, backupProblems, textProblem } from './input-rules';

/** The value Pulumi sends for an input that is not known yet (preview). */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

/**
 * A failed input check, as Pulumi's `check` reports it. Every failure is the resource's (`property: ""`): the engine
 * prints a failure on a property with that property's value as Go formats it (`property rotation value
 * {map[gracePeriod:{24h} interval:{30s}]} has a problem: ...`, and a secret inside it in clear), and on a nested path
 * with no value at all (`{<nil>}`). On the resource it prints `<type> resource '<name>' has a problem: <reason>`, and the
 * reason names the field, the value as the program wrote it and the rule.
 */
export interface CheckFailure {
  /** Always `""`: the resource as a whole (see above). */
  readonly property: '';
  /** What is wrong: the full field path, the value as written (a secret by its length) and the rule (`rotation.interval ("30s"): ...`). */
  readonly reason: string;
}

/** The environment the standard OpenStack and OpenBao variables are read from. */
export type Environment = Readonly<Record<string, string | undefined>>;

type Loose = Record<string, unknown>;

/** The fields of an access rule (Keystone refuses any other). */
const ACCESS_RULE_FIELDS = ['service', 'method', 'path'];

export function isUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(isUnknown);
  if (value !== null && typeof value === 'object') return Object.values(value).some(isUnknown);
  return false;
}

export function record(value: unknown): Loose | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Loose) : undefined;
}

/** The field path a violation names in its reason (`spec.rotation.interval` → `rotation.interval`). */
function fieldOf(field: string): string {
  return field.replace(/^spec\./, '');
}

/**
 * The owner id the checked inputs carry (state.ts, `ProviderInputs.owner`): the one the previous inputs hold, a new one
 * for a create (no previous inputs), none for the update of a state whose inputs never held one (its outputs do). Never
 * taken from the program: an owner is drawn, not chosen, so no program can claim another resource's credentials.
 */
function ownerOf(olds: Loose): string | undefined {
  if (typeof olds.owner === 'string' && olds.owner !== '') return olds.owner;
  return Object.keys(olds).length === 0 ? randomUUID() : undefined;
}

/**
 * The connection's region (issue 49: a template naming `{{ region }}`), as far as `check` can tell: a connection not
 * known yet, or one that fails on its own (reported as such), is given the benefit of the doubt.
 */
function regionOf(connection: unknown, env: Environment, resolvable: boolean): string | undefined {
  if (!resolvable || isUnknown(connection)) return 'not known yet';
  try {
    return resolveConnection(connection as ConnectionSettings | undefined, env).regionName;
  } catch {
    return undefined;
  }
}

/**
 * Defaults, the CRD's rules and the text inputs' rules (`input-rules.ts`); no Keystone or OpenBao call; values not
 * known yet pass. One failure per broken rule, each the resource's (see {@link CheckFailure}); a connection that
 * cannot be assembled, from the inputs or the environment, fails naming the field or variable.
 */
export function checkInputs(env: Environment, olds: Loose, news: Loose): { inputs: Loose; failures: CheckFailure[] } {
  const rotationIn = news.rotation === UNKNOWN ? undefined : record(news.rotation);
  const rotation: Loose = {
    ...rotationIn,
    interval: rotationIn?.interval ?? (news.rotation === UNKNOWN ? UNKNOWN : DEFAULT_INTERVAL),
    gracePeriod: rotationIn?.gracePeriod ?? (news.rotation === UNKNOWN ? UNKNOWN : DEFAULT_GRACE_PERIOD),
  };
  const credentialGeneration = news.credentialGeneration ?? DEFAULT_CREDENTIAL_GENERATION;
  const inputs: Loose = { ...news, credentialGeneration, rotation: news.rotation === UNKNOWN ? UNKNOWN : rotation };
  const owner = ownerOf(olds);
  if (owner !== undefined) inputs.owner = owner;
  else delete inputs.owner;
  const reasons: string[] = [];
  if (news.rotation !== undefined && news.rotation !== null && news.rotation !== UNKNOWN && rotationIn === undefined) {
    reasons.push(`rotation (${JSON.stringify(news.rotation)}): must be an object with the fields interval, gracePeriod`);
  }
  for (const key of Object.keys(rotationIn ?? {})) {
    if (key !== 'interval' && key !== 'gracePeriod') reasons.push(`rotation.${key}: is not a field of rotation (its fields: interval, gracePeriod)`);
  }
  // Issue 42: the credential's roles and access rules, by the CRD's rules; a value not known yet (preview) passes.
  const roles = news.roles === undefined || news.roles === null || isUnknown(news.roles) ? undefined : news.roles;
  const accessRules = news.accessRules === undefined || news.accessRules === null || isUnknown(news.accessRules) ? undefined : news.accessRules;
  if (Array.isArray(accessRules)) {
    accessRules.forEach((rule: unknown, i) => {
      for (const key of Object.keys(record(rule) ?? {})) {
        if (!ACCESS_RULE_FIELDS.includes(key)) reasons.push(`accessRules[${i}].${key}: is not a field of an access rule (its fields: ${ACCESS_RULE_FIELDS.join(', ')})`);
      }
    });
  }
  const template = news.secretTemplate === undefined || news.secretTemplate === null || isUnknown(news.secretTemplate) ? undefined : news.secretTemplate;
  const policy = news.deletionPolicy === undefined || news.deletionPolicy === null || isUnknown(news.deletionPolicy) ? undefined : news.deletionPolicy;
  const unknown = new Set<string>();
  if (isUnknown(credentialGeneration)) unknown.add('spec.credentialGeneration');
  if (isUnknown(rotation.interval)) unknown.add('spec.rotation.interval');
  if (isUnknown(rotation.gracePeriod)) unknown.add('spec.rotation.gracePeriod');
  if (unknown.has('spec.rotation.interval') || unknown.has('spec.rotation.gracePeriod')) unknown.add('spec.rotation');
  const known = <T>(path: string, value: T): T | undefined => (unknown.has(path) ? undefined : value);
  const oldRotation = record(olds.rotation);
  const violations = validate(
    {
      spec: {
        credentialGeneration: known('spec.credentialGeneration', credentialGeneration) as number | undefined,
        rotation: { interval: known('spec.rotation.interval', rotation.interval) as string | undefined, gracePeriod: known('spec.rotation.gracePeriod', rotation.gracePeriod) as string | undefined },
        ...(roles !== undefined ? { roles: roles as readonly string[] } : {}),
        ...(accessRules !== undefined ? { accessRules: accessRules as readonly AccessRule[] } : {}),
        // Issue 49: the template's formats and keys, and the deletion policy, by the CRD's rules.
        ...(template !== undefined ? { secretTemplate: template as SecretTemplate } : {}),
        ...(policy !== undefined ? { deletionPolicy: policy as DeletionPolicy } : {}),
      },
    },
    olds.credentialGeneration === undefined || isUnknown(olds.credentialGeneration)
      ? undefined
      : { spec: { credentialGeneration: olds.credentialGeneration as number, rotation: { interval: oldRotation?.interval as string | undefined, gracePeriod: oldRotation?.gracePeriod as string | undefined } } },
    'settings',
  ).filter((v) => !unknown.has(v.field));
  for (const v of violations) {
    reasons.push(
      v.field === 'spec.rotation'
        ? `rotation.gracePeriod (${String(rotation.gracePeriod)}) must be shorter than rotation.interval (${String(rotation.interval)})`
        : `${fieldOf(v.field)} (${JSON.stringify(v.value)}): ${v.rule}`,
    );
  }
  if (!isUnknown(news.cloudName)) {
    const problem = textProblem('cloudName', news.cloudName, CLOUD_NAME_RULE);
    if (problem !== undefined) reasons.push(problem);
  }
  if (news.backup !== UNKNOWN) reasons.push(...backupProblems(news.backup, env, isUnknown));
  const connectionFailures = news.connection === UNKNOWN ? [] : connectionProblems(news.connection, env, { skip: isUnknown });
  reasons.push(...connectionFailures);
  reasons.push(...deliveryInputProblems(news, regionOf(news.connection, env, connectionFailures.length === 0), (v) => !isUnknown(v)));
  return { inputs, failures: reasons.map((reason) => ({ property: '', reason })) };
}
