/**
 * The rules of the Pulumi face's text inputs that are not the CRD's: the connection's fields, the OpenBao backup's and
 * `cloudName`. `check` runs them, so `pulumi preview` refuses a value that cannot work (empty, only whitespace, longer
 * than the system that reads it accepts, not a URL, not PEM) with no Keystone or OpenBao call, instead of an `up` that
 * fails half-way at Keystone with `400 Expecting to find id or name in user`.
 *
 * Each limit is the reading system's own, so no value that could work is refused:
 *
 * - Keystone (its JSON schemas and SQL columns): user names 255 characters, ids 64, project and domain names 64, region
 *   ids 255, passwords 4096 (`[identity] max_password_length`'s default; longer ones are refused or cut).
 * - OpenBao: nothing but the size of a request's header lines, 1 MiB (Go's `http.Server` default, which OpenBao's
 *   listener keeps): the token, the namespace and the path travel in them.
 * - URLs (`connection.authUrl`, `backup.address`): 2048 characters, the bound the ControlPlane's `authURL` has
 *   (`PlaneLimits.urlMaxLength`).
 * - Names that only this project reads (`cloudName`, `connection.cloud`, keys of a clouds.yaml): 255 characters, as the
 *   ControlPlane's `cloudName` (`PlaneLimits.keystoneNameMaxLength`).
 * - `connection.caBundle`: 1 MiB, what a Kubernetes Secret or ConfigMap holds, and at least one PEM certificate that
 *   parses.
 *
 * A message names the field, the value as written and the rule (`connection.userName (""): must not be empty`); a
 * secret's value is never shown, only its length (`connection.password (5000 characters): ...`).
 */
import { X509Certificate } from 'node:crypto';
import { PlaneLimits } from '../api/identity-plane';
import type { BackupSettings, ConnectionSettings } from './settings';

/** What a text input must be, beyond being a string that is neither empty nor only whitespace. */
export interface TextRule {
  /** The most characters the value may have. */
  readonly maxLength: number;
  /** Whose limit `maxLength` is, said in the message (`Keystone's limit for user names`). */
  readonly limit: string;
  /** A secret: a message shows its length, never its value. */
  readonly secret?: boolean;
  /**
   * More the value must be: an http(s) `url` (an `identity` one ends in `/v3`, as the Keystone client requires), a
   * `pem` bundle of X.509 certificates, or a `path` that is more than slashes.
   */
  readonly shape?: 'url' | 'identity-url' | 'pem' | 'path';
}

const MiB = 1024 * 1024;
const keystone = (what: string, maxLength: number): TextRule => ({ maxLength, limit: `Keystone's limit for ${what}` });
const openbao = (rule: Partial<TextRule> = {}): TextRule => ({ maxLength: MiB, limit: "OpenBao's limit for a request's header lines", ...rule });
const name: TextRule = { maxLength: PlaneLimits.keystoneNameMaxLength, limit: 'the limit of a cloud name' };

/** The connection's fields, by the Keystone field each of them becomes. */
export const CONNECTION_RULES: Readonly<Record<keyof ConnectionSettings, TextRule>> = {
  cloud: name,
  authUrl: { maxLength: PlaneLimits.urlMaxLength, limit: 'the limit of an auth URL', shape: 'identity-url' },
  userName: keystone('user names', 255),
  userId: keystone('ids', 64),
  userDomainName: keystone('domain names', 64),
  userDomainId: keystone('ids', 64),
  password: { ...keystone('passwords', 4096), secret: true },
  projectName: keystone('project names', 64),
  projectId: keystone('ids', 64),
  projectDomainName: keystone('domain names', 64),
  projectDomainId: keystone('ids', 64),
  caBundle: { maxLength: MiB, limit: 'the limit of a Kubernetes Secret', shape: 'pem' },
  regionName: keystone('region ids', 255),
};

/** The backup's fields. */
export const BACKUP_RULES: Readonly<Record<keyof BackupSettings, TextRule>> = {
  address: { maxLength: PlaneLimits.urlMaxLength, limit: 'the limit of an OpenBao address', shape: 'url' },
  token: openbao({ secret: true }),
  mount: openbao({ shape: 'path' }),
  path: openbao({ shape: 'path' }),
  namespace: openbao(),
};

/** `cloudName`. */
export const CLOUD_NAME_RULE: TextRule = name;

/** How a value is shown in a message: as written (JSON), or by its length when it is a secret or long. */
function shown(value: string, rule: TextRule): string {
  return rule.secret === true || value.length > 64 ? `${value.length} characters` : JSON.stringify(value);
}

/** Why a URL cannot be used, or undefined. */
function urlProblem(value: string, identity: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return identity ? 'must be an http or https URL ending in /v3' : 'must be an http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return identity ? 'must be an http or https URL ending in /v3' : 'must be an http or https URL';
  if (identity && !url.pathname.replace(/\/+$/, '').endsWith('/v3')) return 'must end in /v3 (the identity API v3 endpoint)';
  return undefined;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** Why a CA bundle cannot be used, or undefined. */
function pemProblem(value: string): string | undefined {
  const blocks = value.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) return 'must hold PEM certificates (-----BEGIN CERTIFICATE-----)';
  for (const [index, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      return `must hold PEM certificates: certificate ${index + 1} of ${blocks.length} is not a valid X.509 certificate`;
    }
  }
  return undefined;
}

/**
 * What is wrong with `value` at `field` under `rule`, as one message, or undefined when nothing is. An absent value
 * (`undefined`, `null`) is nothing wrong: whether a field is required is the caller's question.
 */
export function textProblem(field: string, value: unknown, rule: TextRule): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return `${field} (${rule.secret === true ? typeof value : JSON.stringify(value)}): must be a string`;
  const at = `${field} (${shown(value, rule)})`;
  if (value.length === 0) return `${at}: must not be empty`;
  if (value.trim().length === 0) return `${at}: must not be only whitespace`;
  if (value.length > rule.maxLength) return `${at}: must be at most ${rule.maxLength} characters long (${rule.limit})`;
  let problem: string | undefined;
  if (rule.shape === 'url' || rule.shape === 'identity-url') problem = urlProblem(value, rule.shape === 'identity-url');
  else if (rule.shape === 'pem') problem = pemProblem(value);
  else if (rule.shape === 'path' && value.replace(/\//g, '').trim().length === 0) problem = 'must name a path, not only slashes';
  return problem === undefined ? undefined : `${at}: ${problem}`;
}

/** Every problem of the fields of `values` (an object of the inputs, or anything else, said to be wrong) under `rules`. */
export function objectProblems<K extends string>(prefix: string, values: unknown, rules: Readonly<Record<K, TextRule>>, skip: (value: unknown) => boolean = () => false): string[] {
  if (values === undefined || values === null) return [];
  if (typeof values !== 'object' || Array.isArray(values)) return [`${prefix}: must be an object with the fields ${Object.keys(rules).join(', ')}`];
  const out: string[] = [];
  for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
    if (skip(value)) continue;
    const rule = (rules as Record<string, TextRule | undefined>)[key];
    if (rule === undefined) {
      out.push(`${prefix}.${key}: is not a field of ${prefix} (its fields: ${Object.keys(rules).join(', ')})`);
      continue;
    }
    const problem = textProblem(`${prefix}.${key}`, value, rule);
    if (problem !== undefined) out.push(problem);
  }
  return out;
}

/** Where each backup field defaults from, in the order the provider reads them (`provider-impl.ts`, `backupOf`). */
const BACKUP_ENV: Readonly<Partial<Record<keyof BackupSettings, readonly string[]>>> = {
  address: ['BAO_ADDR', 'VAULT_ADDR'],
  token: ['BAO_TOKEN', 'VAULT_TOKEN'],
  namespace: ['BAO_NAMESPACE'],
};

/**
 * Everything that keeps the backup from working, without calling OpenBao: every field given that breaks its rule
 * ({@link BACKUP_RULES}), an address or token that neither the input nor the environment sets, and a value the
 * environment gives that breaks its rule, named by its variable. `skip` leaves out values not known yet.
 */
export function backupProblems(backup: unknown, env: Readonly<Record<string, string | undefined>>, skip: (value: unknown) => boolean = () => false): string[] {
  const problems = objectProblems('backup', backup, BACKUP_RULES, skip);
  if (backup === undefined || backup === null || typeof backup !== 'object' || Array.isArray(backup)) return problems;
  const given = backup as Record<string, unknown>;
  for (const [field, variables] of Object.entries(BACKUP_ENV) as [keyof BackupSettings, readonly string[]][]) {
    if (given[field] !== undefined && given[field] !== null) continue;
    const variable = variables.find((name) => env[name] !== undefined);
    if (variable === undefined || env[variable] === '') {
      if (field !== 'namespace') problems.push(`backup.${field} is not set and neither is ${variables[0]}${variables.length > 1 ? ` (or ${variables.slice(1).join(', ')})` : ''}`);
      continue;
    }
    const problem = textProblem(variable, env[variable], BACKUP_RULES[field]);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}
