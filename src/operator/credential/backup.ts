/**
 * The operator's OpenBao: the backup of every order at its backing path (spec, Delivered Secret contract: "openstack/
 * keystone/<controlplane namespace>/<name>-<hash>-applicationcredential/service-accounts/application-credential", whose
 * first segment is the KV v2 mount), authenticated as the constructs configure it: a token (tests, or a token kept in a
 * Secret), or the Kubernetes auth method with the pod's service account token (in a cluster). No OpenBao configured is
 * allowed: then delivery does not wait for a backup.
 */
import { readFileSync } from 'node:fs';
import { errorsOf, OpenBaoBackup, type BackupFetch } from '../../backup/openbao';
import { SERVICE_ACCOUNT_DIR } from '../../kube/client-node';
import { serviceAccountOfToken } from '../../kube/identity';
import type { BackupPort, SecretData } from '../../lifecycle/ports';

/** How the operator authenticates to OpenBao. */
export type OpenBaoLogin =
  | { readonly method: 'token'; readonly token: string }
  | {
      readonly method: 'kubernetes';
      /** The OpenBao role bound to the operator's service account. */
      readonly role: string;
      /** Mount path of the Kubernetes auth method. @default "kubernetes" */
      readonly mount?: string;
      /** The service account token file. @default "/var/run/secrets/kubernetes.io/serviceaccount/token" */
      readonly jwtFile?: string;
    };

/** Where and how the operator backs credentials up. */
export interface OpenBaoConfig {
  readonly address: string;
  readonly login: OpenBaoLogin;
  /** A PEM file with the CA OpenBao's certificate chains to. @default the system trust store */
  readonly caFile?: string;
  /** Milliseconds one request may take. @default 10000 */
  readonly timeoutMs?: number;
  /** Replaces the global fetch (unit tests). */
  readonly fetch?: BackupFetch;
}

/**
 * Logs in once and reuses the token until shortly before its lease ends; a refused token logs in again. Shared by every
 * worker: concurrent passes wait for one login, and a token refused under several of them is replaced once.
 */
export class OpenBao {
  private token?: { value: string; until: number };
  private pending?: Promise<string>;
  private readonly fetchImpl: BackupFetch;

  constructor(private readonly config: OpenBaoConfig) {
    this.fetchImpl = config.fetch ?? fetchWithCa(config.caFile);
  }

  /** The backup at a backing path (`<mount>/<path>`). */
  at(backingPath: string): BackupPort {
    const slash = backingPath.indexOf('/');
    const mount = backingPath.slice(0, slash);
    const path = backingPath.slice(slash + 1);
    const backup = (token: string) => new OpenBaoBackup({ address: this.config.address, token, mount, path, fetch: this.fetchImpl, timeoutMs: this.config.timeoutMs ?? 10_000 });
    const retry = async <T>(call: (b: OpenBaoBackup) => Promise<T>): Promise<T> => {
      const token = await this.currentToken();
      try {
        return await call(backup(token));
      } catch (error) {
        if (this.config.login.method !== 'kubernetes' || (error as { status?: number }).status !== 403) throw error;
        // Expired or revoked: log in again, once. Only the refused token is dropped: concurrent passes refused with it
        // too must not drop the one a pass before them has just logged in for.
        if (this.token?.value === token) this.token = undefined;
        return call(backup(await this.currentToken()));
      }
    };
    return {
      read: () => retry((b) => b.read()),
      write: (data: SecretData) => retry((b) => b.write(data)),
      remove: () => retry((b) => b.remove()),
    };
  }

  private async currentToken(): Promise<string> {
    const login = this.config.login;
    if (login.method === 'token') return login.token;
    if (this.token && Date.now() < this.token.until) return this.token.value;
    this.pending ??= this.login(login).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async login(login: Extract<OpenBaoLogin, { method: 'kubernetes' }>): Promise<string> {
    const jwtFile = login.jwtFile ?? `${SERVICE_ACCOUNT_DIR}/token`;
    let jwt: string;
    try {
      jwt = readFileSync(jwtFile, 'utf8').trim();
    } catch (error) {
      throw new Error(
        `OpenBao's Kubernetes auth needs the service account token at ${jwtFile}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ` +
          'run the operator with its service account token mounted (automountServiceAccountToken: true), or use token auth',
      );
    }
    const mount = login.mount ?? 'kubernetes';
    const where = `/v1/auth/${mount}/login`;
    const response = await this.fetchImpl(`${this.config.address.replace(/\/+$/, '')}${where}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: login.role, jwt }),
      signal: AbortSignal.timeout(this.config.timeoutMs ?? 10_000),
    });
    if (!response.ok) {
      const said = errorsOf(await response.text().catch(() => ''));
      const sa = serviceAccountOfToken(jwt);
      const account = sa ? `${sa.namespace}/${sa.name}` : '';
      throw new Error(
        `OpenBao POST ${where}: ${response.status}: login as role ${login.role} refused (${said}); check that the role exists ` +
          `(bao read auth/${mount}/role/${login.role}), that it binds ${account ? `the service account ${account}` : "the operator's service account"} ` +
          `(bound_service_account_names, bound_service_account_namespaces), and that auth/${mount}/config reaches this cluster's API server with a token reviewer`,
      );
    }
    const body = (await response.json()) as { auth?: { client_token?: string; lease_duration?: number } };
    const value = body.auth?.client_token;
    if (!value) throw new Error(`OpenBao POST ${where}: the reply carries no token`);
    const lease = (body.auth?.lease_duration ?? 300) * 1000;
    this.token = { value, until: Date.now() + Math.max(lease - 60_000, lease / 2) };
    return value;
  }
}

/** The global fetch, trusting `caFile` alone when one is given. */
function fetchWithCa(caFile: string | undefined): BackupFetch {
  if (!caFile) return (url, init) => fetch(url, init);
  // Loaded only for a custom CA, as the Keystone client does: undici is a large module.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Agent } = require('undici') as typeof import('undici');
  const dispatcher = new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } });
  return (url, init) => fetch(url, { ...init, dispatcher } as RequestInit);
}
