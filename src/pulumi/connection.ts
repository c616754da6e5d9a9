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

/**
 * The ordered user's Keystone connection as explicit values. Every value may also come from the environment; an
 * explicit value wins field by field only when `cloud` is not set.
 */
export interface ConnectionSettings {
  /**
   * A cloud of `clouds.yaml` to read every other field from, instead of `OS_CLOUD`.
   * @default the `OS_CLOUD` variable, else the `OS_*` variables
   */
  readonly cloud?: string;
  /** The identity endpoint ending in `/v3`. @default `OS_AUTH_URL` */
  readonly authUrl?: string;
  /** The user's name (with a domain). @default `OS_USERNAME` */
  readonly userName?: string;
  /** The user's id, instead of its name. @default `OS_USER_ID` */
  readonly userId?: string;
  /** The user's domain by name. @default `OS_USER_DOMAIN_NAME`, else "Default" */
  readonly userDomainName?: string;
  /** The user's domain by id. @default `OS_USER_DOMAIN_ID` */
  readonly userDomainId?: string;
  /** The user's password. @default `OS_PASSWORD` */
  readonly password?: string;
  /** The project's name (with a domain). @default `OS_PROJECT_NAME` (or `OS_TENANT_NAME`) */
  readonly projectName?: string;
  /** The project's id, instead of its name. @default `OS_PROJECT_ID` (or `OS_TENANT_ID`) */
  readonly projectId?: string;
  /** The project's domain by name. @default `OS_PROJECT_DOMAIN_NAME`, else "Default" */
  readonly projectDomainName?: string;
  /** The project's domain by id. @default `OS_PROJECT_DOMAIN_ID` */
  readonly projectDomainId?: string;
  /** PEM certificates to trust for the endpoint. @default the file `OS_CACERT` names, else the system's trust store */
  readonly caBundle?: string;
  /** The region written into the delivered `clouds.yaml`. @default `OS_REGION_NAME`, else none */
  readonly regionName?: string;
}

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

/** Reads the cloud `name` from the first clouds.yaml that has it (and merges `secure.yaml` beside it, if present). */
export function readCloud(name: string, env: Env, cwd?: string): ConnectionSettings {
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
    const cacert = str(cloud.cacert) ?? str(secure.cacert);
    return {
      authUrl: str(auth.auth_url),
      userName: str(auth.username) ?? str(auth.user_name),
      userId: str(auth.user_id),
      userDomainName: str(auth.user_domain_name) ?? str(auth.domain_name),
      userDomainId: str(auth.user_domain_id) ?? str(auth.domain_id),
      password: str(auth.password),
      projectName: str(auth.project_name) ?? str(auth.tenant_name),
      projectId: str(auth.project_id) ?? str(auth.tenant_id),
      projectDomainName: str(auth.project_domain_name) ?? str(auth.domain_name),
      projectDomainId: str(auth.project_domain_id) ?? str(auth.domain_id),
      caBundle: cacert !== undefined ? readFileSync(cacert, 'utf8') : undefined,
      regionName: str(cloud.region_name),
    };
  }
  throw new ConnectionError(`no clouds.yaml defines the cloud "${name}" (searched ${candidates.join(', ')})`);
}

/** The `OS_*` variables as connection settings. */
export function fromEnvironment(env: Env): ConnectionSettings {
  return {
    authUrl: str(env.OS_AUTH_URL),
    userName: str(env.OS_USERNAME),
    userId: str(env.OS_USER_ID),
    userDomainName: str(env.OS_USER_DOMAIN_NAME),
    userDomainId: str(env.OS_USER_DOMAIN_ID),
    password: str(env.OS_PASSWORD),
    projectName: str(env.OS_PROJECT_NAME) ?? str(env.OS_TENANT_NAME),
    projectId: str(env.OS_PROJECT_ID) ?? str(env.OS_TENANT_ID),
    projectDomainName: str(env.OS_PROJECT_DOMAIN_NAME),
    projectDomainId: str(env.OS_PROJECT_DOMAIN_ID),
    caBundle: str(env.OS_CACERT) !== undefined ? readFileSync(env.OS_CACERT as string, 'utf8') : undefined,
    regionName: str(env.OS_REGION_NAME),
  };
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

/**
 * Resolves the connection: explicit settings (a `cloud`, or the values themselves), else `OS_CLOUD`, else the `OS_*`
 * variables. Throws {@link ConnectionError} naming the missing field and the source.
 */
export function resolveConnection(explicit: ConnectionSettings | undefined, env: Env = process.env, cwd?: string): ResolvedConnection {
  let settings: ConnectionSettings;
  let source: string;
  let fields: Fields;
  if (explicit?.cloud !== undefined) {
    settings = readCloud(explicit.cloud, env, cwd);
    source = `connection.cloud: clouds.yaml cloud "${explicit.cloud}"`;
    fields = FIELDS.cloud;
  } else if (hasExplicit(explicit)) {
    settings = explicit;
    source = 'connection';
    fields = FIELDS.inputs;
  } else if (str(env.OS_CLOUD) !== undefined) {
    settings = readCloud(env.OS_CLOUD as string, env, cwd);
    source = `clouds.yaml cloud "${env.OS_CLOUD as string}" (OS_CLOUD)`;
    fields = FIELDS.cloud;
  } else {
    settings = fromEnvironment(env);
    source = 'OS_* variables';
    fields = FIELDS.environment;
  }
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
