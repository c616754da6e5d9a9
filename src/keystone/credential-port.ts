/**
 * The lifecycle's Keystone port on this client: the ordered user's application credentials whose names are the order's
 * deterministic generation names, and the document a credential is delivered as.
 */
import { generationOf } from '../api/naming';
import type { HeldPrivileges } from '../lifecycle/model';
import { describeCredential, markOf, type CredentialMark } from '../lifecycle/ownership';
import type { CredentialPort, KeystoneCredential, SecretData } from '../lifecycle/ports';
import { ApplicationCredentials, type ApplicationCredential } from './application-credentials';
import { issueToken } from './auth';
import { renderCloudsYaml, type CloudsYamlInput } from './clouds-yaml';
import { isKeystoneError } from './errors';
import { knownCredentials } from './known-credentials';
import type { KeystoneSession } from './session';

/** Options of {@link credentialPort}. */
export interface CredentialPortOptions {
  /**
   * What every credential's description says it is for, before its marks (`; owner=<id>; proof=<digest>`, see
   * src/lifecycle/ownership.ts).
   * @default "managed by keystone-appcred"
   */
  readonly description?: string;
  /**
   * Milliseconds a list waits for other passes of the same session to share one request with; set by the first port
   * of a session (see known-credentials.ts).
   * @default 0 (lists asked for in the same turn of the event loop share one request)
   */
  readonly listWindowMs?: number;
  /**
   * How long the session's last list, with this process's own creates and deletes applied, serves later passes; set
   * by the first port of a session (see known-credentials.ts).
   * @default 60000
   */
  readonly maxAgeMs?: number;
  /** Observe Keystone as it is now: never reuse an earlier list (Pulumi's `read`). @default false */
  readonly fresh?: boolean;
  /**
   * Called each time Keystone itself answered a call of the port: a list it sent or joined (not one the known
   * credentials served), a create, a delete, a check of a delivered id, whether they succeeded or Keystone refused
   * them; not when Keystone did not answer (no connection, no reply in time, 5xx, 429). What tells the operator's
   * dependency waits that Keystone answers again (src/operator/runtime/dependencies.ts). @default none
   */
  readonly onAnswer?: () => void;
}

/**
 * The credentials of `prefix` through `session` (authenticated as the ordered user, scoped to the ordered project).
 * Listing filters the user's credentials by name, so credentials the user created otherwise are never touched; each
 * comes with the marks its description carries, by which the lifecycle tells the order's own from a foreign one
 * (src/lifecycle/ownership.ts), and a create writes the order's marks into the description.
 *
 * The observation is the session's known credentials (known-credentials.ts): one list per user shared by the passes of a burst, with
 * what this process created and deleted since applied to it; a create or delete whose outcome is unsure forgets it,
 * so the next pass lists again (the crash-safety of the observation holds: see known-credentials.ts).
 */
export function credentialPort(session: KeystoneSession, prefix: string, options: CredentialPortOptions = {}): CredentialPort {
  const credentials = new ApplicationCredentials(session);
  const description = options.description ?? 'managed by keystone-appcred';
  const known = knownCredentials(session, {
    ...(options.listWindowMs !== undefined ? { listWindowMs: options.listWindowMs } : {}),
    ...(options.maxAgeMs !== undefined ? { maxAgeMs: options.maxAgeMs } : {}),
  });
  const unsure = (error: unknown): never => {
    known.forget();
    throw error;
  };
  /** `call`, whose reply (or refusal) is Keystone's answer when `asked()` says a request was sent. */
  const answered = async <T>(call: Promise<T>, asked: () => boolean = () => true): Promise<T> => {
    try {
      const reply = await call;
      if (asked()) options.onAnswer?.();
      return reply;
    } catch (error) {
      if (isKeystoneError(error) && !error.retryable) options.onAnswer?.();
      throw error;
    }
  };
  return {
    async list(adopted): Promise<KeystoneCredential[]> {
      const out: KeystoneCredential[] = [];
      let requested = false;
      const listed = await answered(known.list({ fresh: options.fresh === true, requested: () => (requested = true) }), () => requested);
      for (const c of listed) {
        const generation = adopted?.get(c.id) ?? generationOf(prefix, c.name);
        if (generation === undefined) continue;
        const mark = markOf(c.description);
        out.push({ generation, id: c.id, name: c.name, mark, userId: c.userId, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), privileges: privilegesOf(c, mark) });
      }
      return out;
    },
    async create(request) {
      const c = await answered(credentials.create({
          name: request.name,
          description: describeCredential(description, request.mark),
          secret: request.secret,
          ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}),
          ...(request.roles !== undefined ? { roles: request.roles } : {}),
          ...(request.accessRules !== undefined ? { accessRules: request.accessRules } : {}),
        })).catch(unsure);
      known.created(c);
      return { id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), privileges: privilegesOf(c, request.mark) };
    },
    async roles() {
      return (await session.token()).roles;
    },
    async delete(id) {
      await answered(credentials.delete(id)).catch(unsure);
      known.deleted(id);
    },
    async describe(id) {
      const c = await answered(credentials.get(id));
      if (c === undefined) return undefined;
      // Made elsewhere (by hand, to adopt it: issue 49), after the session's last list perhaps: the view learns of it, so
      // the passes it serves list it by id as the adopted generation.
      known.created(c);
      const mark = markOf(c.description);
      return { id: c.id, name: c.name, projectId: c.projectId, unrestricted: c.unrestricted, mark, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), privileges: privilegesOf(c, mark) };
    },
    async scope() {
      const token = await session.token();
      return {
        userId: token.userId,
        projectId: token.projectId,
        ...(token.projectName !== undefined ? { projectName: token.projectName } : {}),
        ...(token.projectDomainName !== undefined ? { projectDomainName: token.projectDomainName } : {}),
      };
    },
    async verify(id, secret) {
      try {
        const issued = await answered(issueToken(session.transport, { method: 'application-credential', id, secret }));
        return issued.applicationCredential?.id === id;
      } catch (error) {
        if (isKeystoneError(error, 'unauthorized', 'not-found')) return false;
        throw error;
      }
    },
  };
}

/** What a credential carries, as Keystone lists it, and whether its description marks its roles as a chosen subset. */
function privilegesOf(credential: ApplicationCredential, mark: CredentialMark): HeldPrivileges {
  // Sorted: Keystone lists a credential's roles in no fixed order, and what is recorded must not change with it.
  return { roles: [...credential.roles].sort(), subset: mark.subset === true, accessRules: credential.accessRules };
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
