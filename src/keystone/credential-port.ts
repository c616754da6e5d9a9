/**
 * The lifecycle's Keystone port on this client: the ordered user's application credentials whose names are the order's
 * deterministic generation names, and the document a credential is delivered as.
 */
import { generationOf } from '../api/naming';
import type { CredentialPort, KeystoneCredential, SecretData } from '../lifecycle/ports';
import { ApplicationCredentials, type ApplicationCredential } from './application-credentials';
import { renderCloudsYaml, type CloudsYamlInput } from './clouds-yaml';
import { isKeystoneError } from './errors';
import type { KeystoneSession } from './session';

/** Options of {@link credentialPort}. */
export interface CredentialPortOptions {
  /** Description stored on every credential. @default "managed by keystone-appcred" */
  readonly description?: string;
  /**
   * Milliseconds a list waits for other lists of the same session to share one request with (see {@link sharedList}).
   * @default 0 (lists asked for in the same turn of the event loop share one request)
   */
  readonly listWindowMs?: number;
}

/** A list of a session's credentials not sent yet, which later askers may join. */
interface OpenList {
  readonly credentials: Promise<ApplicationCredential[]>;
  sent: boolean;
}

const openLists = new WeakMap<KeystoneSession, OpenList>();

/**
 * The user's credentials, one request for every pass that asks within `windowMs` (the orders of one user, e.g. the
 * credentials of one `pulumi up`, which Pulumi creates in parallel). A pass only joins a list that has not been sent
 * yet, so the reply always reflects Keystone after the pass began: what the pass's own earlier actions created is in it
 * (the crash-safety of the observation holds), and each pass filters its own generation names out of it.
 */
function sharedList(session: KeystoneSession, windowMs: number): Promise<ApplicationCredential[]> {
  const open = openLists.get(session);
  if (open && !open.sent) return open.credentials;
  const list: { credentials?: Promise<ApplicationCredential[]>; sent: boolean } = { sent: false };
  list.credentials = new Promise<void>((resolve) => setTimeout(resolve, windowMs)).then(() => {
    list.sent = true;
    if (openLists.get(session) === list) openLists.delete(session);
    return new ApplicationCredentials(session).list();
  });
  openLists.set(session, list as OpenList);
  return list.credentials;
}

/**
 * The credentials of `prefix` through `session` (authenticated as the ordered user, scoped to the ordered project).
 * Listing filters the user's credentials by name, so credentials the user created otherwise are never touched.
 */
export function credentialPort(session: KeystoneSession, prefix: string, options: CredentialPortOptions = {}): CredentialPort {
  const credentials = new ApplicationCredentials(session);
  const description = options.description ?? 'managed by keystone-appcred';
  const windowMs = options.listWindowMs ?? 0;
  return {
    async list(): Promise<KeystoneCredential[]> {
      const out: KeystoneCredential[] = [];
      for (const c of await sharedList(session, windowMs)) {
        const generation = generationOf(prefix, c.name);
        if (generation !== undefined) out.push({ generation, id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) });
      }
      return out;
    },
    async create(request) {
      const c = await credentials.create({ name: request.name, description, secret: request.secret, ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}) });
      return { id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) };
    },
    async delete(id) {
      await credentials.delete(id);
    },
  };
}

/**
 * Whether Keystone refused a create for good: a malformed request (400) or a refusal (403). Such a generation is reported
 * `CredentialFailed` and is not retried until `spec.credentialGeneration` is raised above it. A 409 is not terminal: the
 * name exists, and the next observation finds the credential under it.
 */
export function isTerminalCreateError(error: unknown): boolean {
  return isKeystoneError(error, 'bad-request', 'forbidden');
}

/** Renders the delivered Secret's three keys for a credential (spec, Delivered Secret contract). */
export function deliveredData(cloud: Omit<CloudsYamlInput, 'applicationCredentialId' | 'applicationCredentialSecret'>, id: string, secret: string): SecretData {
  return {
    'clouds.yaml': renderCloudsYaml({ ...cloud, applicationCredentialId: id, applicationCredentialSecret: secret }),
    application_credential_id: id,
    application_credential_secret: secret,
  };
}
