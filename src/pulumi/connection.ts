/**
 * Where the Pulumi provider gets the ordered user's Keystone connection: explicit inputs, or else the standard OpenStack
 * sources read inside the provider process — a named cloud of a `clouds.yaml` (`OS_CLOUD`), or the `OS_*` variables.
 * The password never leaves this module except inside the session options.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KeystoneSessionOptions, NamedRef } from '../keystone';
import { CONNECTION_RULES, objectProblems, textProblem } from './input-rules';
import type { ConnectionSettings } from './settings';

/** A resolved connection: session options plus what the delivered document needs. */
export interface ResolvedConnection {
  readonly session: KeystoneSessionOptions;
  readonly authUrl: string;
  readonly regionName?: string;
  /**
   * Where the values came from, for messages: `connection` (the explicit input), `connection.cloud: clouds.yaml cloud
   * "x"`, `clouds.yaml cloud "x" (OS_CLOUD)` or `OS_* variables`.
   */
  readonly source: string;
}

/**
 * The connection could not be resolved; the message names the source, the missing field and where to set it (the input's
 * field path, the clouds.yaml key or the variable), never a password.
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
}

type Env = Readonly<Record<string, string | undefined>>;

/** The clouds.yaml files OpenStack clients search, in order. */
export function cloudsYamlCandidates(env: Env, cwd: string = process.cwd()): string[] {
  const home = env.HOME ?? homedir();
  return [env.OS_CLIENT_CONFIG_FILE, join(cwd, 'clouds.yaml'), join(home, '.config', 'openstack', 'clouds.yaml'), '/etc/openstack/clouds.yaml'].filter(
    (p): p is string => p !== undefined && p.length > 0,
  );
}

function str(value: unknown): string | undefined {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

/** The fields a source provides (every one but `cloud`, which only the inputs have). */
type Field = Exclude<keyof ConnectionSettings, 'cloud'>;

/** Settings of one source, with the name each value had there (`OS_USERNAME`, `auth.username`), for messages. */
interface Sourced {
  readonly settings: ConnectionSettings;
  readonly origins: Readonly<Partial<Record<Field, string>>>;
}

/** The variables of each field, in the order OpenStack clients read them; `OS_CACERT` names a file. */
const ENV_VARIABLES: Readonly<Record<Field, readonly string[]>> = {
  authUrl: ['OS_AUTH_URL'],
  userName: ['OS_USERNAME'],
  userId: ['OS_USER_ID'],
  userDomainName: ['OS_USER_DOMAIN_NAME'],
  userDomainId: ['OS_USER_DOMAIN_ID'],
  password: ['OS_PASSWORD'],
  projectName: ['OS_PROJECT_NAME', 'OS_TENANT_NAME'],
  projectId: ['OS_PROJECT_ID', 'OS_TENANT_ID'],
  projectDomainName: ['OS_PROJECT_DOMAIN_NAME'],
  projectDomainId: ['OS_PROJECT_DOMAIN_ID'],
  caBundle: ['OS_CACERT'],
  regionName: ['OS_REGION_NAME'],
};

/** The keys of each field in a cloud of clouds.yaml (with its secure.yaml merged), in the order openstacksdk reads them. */
const CLOUD_KEYS: Readonly<Record<Field, readonly string[]>> = {
  authUrl: ['auth.auth_url'],
  userName: ['auth.username', 'auth.user_name'],
  userId: ['auth.user_id'],
  userDomainName: ['auth.user_domain_name', 'auth.domain_name'],
  userDomainId: ['auth.user_domain_id', 'auth.domain_id'],
  password: ['auth.password'],
  projectName: ['auth.project_name', 'auth.tenant_name'],
  projectId: ['auth.project_id', 'auth.tenant_id'],
  projectDomainName: ['auth.project_domain_name', 'auth.domain_name'],
  projectDomainId: ['auth.project_domain_id', 'auth.domain_id'],
  caBundle: ['cacert'],
  regionName: ['region_name'],
};

/**
 * Settings from named values: each field takes the first of its names that has a value (`lookup`); `caBundle` is read
 * from the file its value names. A file that cannot be read fails naming the name and the path.
 */
function sourced(names: Readonly<Record<Field, readonly string[]>>, lookup: (name: string) => unknown, source: string): Sourced {
  const settings: Record<string, string> = {};
  const origins: Partial<Record<Field, string>> = {};
  for (const field of Object.keys(names) as Field[]) {
    for (const name of names[field]) {
      const value = str(lookup(name));
      if (value === undefined) continue;
      if (field === 'caBundle') {
        try {
          settings[field] = readFileSync(value, 'utf8');
        } catch (error) {
          throw new ConnectionError(`${source}: ${name} (${JSON.stringify(value)}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
        }
        origins[field] = `${name} file ${value}`;
      } else {
        settings[field] = value;
        origins[field] = name;
      }
      break;
    }
  }
  return { settings, origins };
}

/** The cloud `name` of the first clouds.yaml that has it (secure.yaml beside it merged), with each value's key. */
function cloudSettings(name: string, env: Env, cwd: string | undefined, source: string): Sourced {
  const candidates = cloudsYamlCandidates(env, cwd);
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    const doc = parsedFile(file) as { clouds?: Record<string, unknown> } | null;
    const cloud = doc?.clouds?.[name] as Record<string, unknown> | undefined;
    if (!cloud) continue;
    const secureFile = file.replace(/clouds\.yaml$/, 'secure.yaml');
    const secure = secureFile !== file && existsSync(secureFile) ? ((parsedFile(secureFile) as { clouds?: Record<string, Record<string, unknown>> } | null)?.clouds?.[name] ?? {}) : {};
    const auth = { ...((cloud.auth as Record<string, unknown> | undefined) ?? {}), ...((secure.auth as Record<string, unknown> | undefined) ?? {}) };
    const authType = str(cloud.auth_type);
    if (authType !== undefined && authType !== 'password' && authType !== 'v3password') {
      throw new ConnectionError(`clouds.yaml cloud "${name}" (${file}) has auth_type ${authType}; the ordered user must authenticate with a password`);
    }
    const merged: Record<string, unknown> = { ...cloud, cacert: str(cloud.cacert) ?? secure.cacert };
    return sourced(CLOUD_KEYS, (key) => (key.startsWith('auth.') ? auth[key.slice('auth.'.length)] : merged[key]), source);
  }
  throw new ConnectionError(`no clouds.yaml defines the cloud "${name}" (searched ${candidates.join(', ')})`);
}

/** Reads the cloud `name` from the first clouds.yaml that has it (and merges `secure.yaml` beside it, if present). */
export function readCloud(name: string, env: Env, cwd?: string): ConnectionSettings {
  return cloudSettings(name, env, cwd, `clouds.yaml cloud "${name}"`).settings;
}

/** The `OS_*` variables as connection settings. */
export function fromEnvironment(env: Env): ConnectionSettings {
  return sourced(ENV_VARIABLES, (name) => env[name], 'OS_* variables').settings;
}

/** Whether explicit settings name anything at all (otherwise the environment is the source). */
export function hasExplicit(settings: ConnectionSettings | undefined): settings is ConnectionSettings {
  return settings !== undefined && Object.values(settings).some((v) => v !== undefined && v !== null && v !== '');
}

/** Where each field is set, in the words of each kind of source, for the messages of a missing field. */
const FIELDS = {
  inputs: { authUrl: 'connection.authUrl', password: 'connection.password', user: 'connection.userName or connection.userId', project: 'connection.projectName or connection.projectId' },
  cloud: { authUrl: 'auth.auth_url', password: 'auth.password in clouds.yaml or secure.yaml', user: 'auth.username or auth.user_id', project: 'auth.project_name or auth.project_id' },
  environment: { authUrl: 'OS_AUTH_URL or OS_CLOUD, or the connection input', password: 'OS_PASSWORD', user: 'OS_USERNAME or OS_USER_ID', project: 'OS_PROJECT_NAME or OS_PROJECT_ID' },
} as const;

type Fields = (typeof FIELDS)[keyof typeof FIELDS];

function ref(kind: 'user' | 'project', id: string | undefined, name: string | undefined, domainId: string | undefined, domainName: string | undefined, source: string, fields: Fields): NamedRef {
  if (id !== undefined) return { id };
  if (name === undefined) throw new ConnectionError(`${source}: the ${kind} is missing (set ${fields[kind]})`);
  if (domainId !== undefined) return { name, domainId };
  return { name, domainName: domainName ?? 'Default' };
}

/** The source the connection comes from: explicit settings (a `cloud`, or the values), else `OS_CLOUD`, else `OS_*`. */
function select(explicit: ConnectionSettings | undefined, env: Env, cwd?: string): Sourced & { readonly source: string; readonly fields: Fields } {
  if (explicit?.cloud !== undefined) {
    const source = `connection.cloud: clouds.yaml cloud "${explicit.cloud}"`;
    return { ...cloudSettings(explicit.cloud, env, cwd, source), source, fields: FIELDS.cloud };
  }
  if (hasExplicit(explicit)) {
    const origins = Object.fromEntries(Object.keys(ENV_VARIABLES).map((field) => [field, `connection.${field}`]));
    return { settings: explicit, origins, source: 'connection', fields: FIELDS.inputs };
  }
  if (str(env.OS_CLOUD) !== undefined) {
    const source = `clouds.yaml cloud "${env.OS_CLOUD as string}" (OS_CLOUD)`;
    return { ...cloudSettings(env.OS_CLOUD as string, env, cwd, source), source, fields: FIELDS.cloud };
  }
  const source = 'OS_* variables';
  return { ...sourced(ENV_VARIABLES, (name) => env[name], source), source, fields: FIELDS.environment };
}

/**
 * Resolves the connection: explicit settings (a `cloud`, or the values themselves), else `OS_CLOUD`, else the `OS_*`
 * variables. Throws {@link ConnectionError} naming the missing field and the source.
 */
export function resolveConnection(explicit: ConnectionSettings | undefined, env: Env = process.env, cwd?: string): ResolvedConnection {
  const { settings, source, fields } = select(explicit, env, cwd);
  if (settings.authUrl === undefined) throw new ConnectionError(`${source}: the auth URL is missing (set ${fields.authUrl})`);
  if (settings.password === undefined) throw new ConnectionError(`${source}: the password is missing (set ${fields.password})`);
  const user = ref('user', settings.userId, settings.userName, settings.userDomainId, settings.userDomainName, source, fields);
  const project = ref('project', settings.projectId, settings.projectName, settings.projectDomainId, settings.projectDomainName, source, fields);
  const authUrl = settings.authUrl.replace(/\/+$/, '');
  return {
    session: {
      authUrl,
      auth: { method: 'password', user, password: settings.password, project },
      ...(settings.caBundle !== undefined ? { caBundle: settings.caBundle } : {}),
    },
    authUrl,
    ...(settings.regionName !== undefined ? { regionName: settings.regionName } : {}),
    source,
  };
}

/**
 * Everything that keeps the connection from working, without calling Keystone, one message each: every explicit
 * field that breaks its rule ({@link CONNECTION_RULES}: empty, only whitespace, longer than Keystone accepts, not a
 * `/v3` URL, not PEM), every value of the source in use (`OS_*` variables, a clouds.yaml cloud) that does, named as
 * that source names it, and a field the source lacks. `skip` leaves out values not known yet (a preview). Empty when
 * the connection can be assembled.
 */
export function connectionProblems(explicit: unknown, env: Env = process.env, options: { readonly cwd?: string; readonly skip?: (value: unknown) => boolean } = {}): string[] {
  const skip = options.skip ?? (() => false);
  const problems = objectProblems('connection', explicit, CONNECTION_RULES, skip);
  if (problems.length > 0 || Object.values((explicit ?? {}) as object).some(skip)) return problems;
  const given = explicit as ConnectionSettings | undefined;
  try {
    const { settings, origins, source } = select(given, env, options.cwd);
    if (source !== 'connection') {
      for (const field of Object.keys(origins) as Field[]) {
        const problem = textProblem(origins[field] as string, settings[field], CONNECTION_RULES[field]);
        if (problem !== undefined) problems.push(`${source}: ${problem}`);
      }
    }
    if (problems.length === 0) resolveConnection(given, env, options.cwd);
  } catch (error) {
    if (!(error instanceof ConnectionError)) throw error;
    problems.push(error.message);
  }
  return problems;
}

/**
 * A clouds.yaml or secure.yaml read and parsed; a YAML error names the file and the first line of the parser's message
 * only: the rest quotes the lines around the error, and secure.yaml's lines are passwords.
 */
function parsedFile(file: string): unknown {
  try {
    return parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConnectionError(`${file} is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}
