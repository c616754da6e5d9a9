/**
 * The session user's application credentials (`/v3/users/{user_id}/application_credentials`).
 *
 * Every credential this client creates is restricted (`unrestricted: false`: it cannot create or delete other
 * application credentials) and carries a client-supplied secret, so the secret can be parked before Keystone ever sees
 * it and a crash between "create" and "deliver" loses nothing (see the architecture's crash-safety note).
 */
import type { AccessRule } from '../api/privileges';
import { deleteResource, type DeleteOutcome } from './delete';
import { isKeystoneError } from './errors';
import { Reply } from './reply';
import type { KeystoneSession } from './session';
import { formatKeystoneTime, parseKeystoneTime } from './time';

/** An application credential as Keystone reports it (the secret is never reported back). */
export interface ApplicationCredential {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly userId: string;
  /** The project every token issued from it is scoped to. */
  readonly projectId: string;
  /** When it stops authenticating; `undefined` = never. */
  readonly expiresAt?: Date;
  /**
   * Names of the roles it delegates: the ones asked for at create, else the creating token's roles on the project
   * (implied ones included).
   */
  readonly roles: readonly string[];
  /** Whether it may manage other application credentials (`false` for every credential this client creates). */
  readonly unrestricted: boolean;
  /** The only requests a token from it may make; empty: none (every request its roles allow). */
  readonly accessRules: readonly AccessRule[];
}

/** What {@link ApplicationCredentials.create} needs. */
export interface ApplicationCredentialInput {
  /** Unique per user; Keystone answers 409 (`conflict`) for a name the user already has. */
  readonly name: string;
  readonly description?: string;
  /** The secret to hash and accept; generated and parked by the caller beforehand. */
  readonly secret: string;
  /** Expiry, sent as UTC `…Z` (Keystone rejects `+hh:mm` offsets and past times). @default never expires */
  readonly expiresAt?: Date;
  /**
   * Names of the roles it carries, a subset of the creating token's roles on the project (Keystone answers 400 "Cannot
   * create an application credential with unassigned role" for another, 404 for a role that does not exist).
   * @default every role of the creating token
   */
  readonly roles?: readonly string[];
  /** The only requests a token from it may make (Keystone's `access_rules`). @default none */
  readonly accessRules?: readonly AccessRule[];
}

/**
 * Creates, reads and deletes the application credentials of the session's user, on the project its token is scoped to.
 * Uses the user-scoped URL for single credentials: the `links.self` URL Keystone returns answers 404.
 */
export class ApplicationCredentials {
  constructor(private readonly session: KeystoneSession) {}

  /**
   * Creates a restricted credential with the given secret. Throws `conflict` when the user already has one with that
   * name, `forbidden` when the session itself authenticated with an application credential, `bad-request` for a past
   * or malformed expiry.
   */
  async create(input: ApplicationCredentialInput): Promise<ApplicationCredential> {
    if (input.name.length === 0) throw new Error('name must not be empty');
    if (input.secret.length === 0) throw new Error('secret must not be empty');
    const body: Record<string, unknown> = {
      name: input.name,
      secret: input.secret,
      unrestricted: false,
    };
    if (input.description !== undefined) body.description = input.description;
    if (input.expiresAt !== undefined) body.expires_at = formatKeystoneTime(input.expiresAt);
    if (input.roles !== undefined && input.roles.length > 0) body.roles = input.roles.map((name) => ({ name }));
    if (input.accessRules !== undefined && input.accessRules.length > 0) {
      body.access_rules = input.accessRules.map((rule) => ({ service: rule.service, method: rule.method, path: rule.path }));
    }
    const path = await this.collectionPath();
    const response = await this.session.request({
      method: 'POST',
      path,
      body: { application_credential: body },
      sensitive: [input.secret],
    });
    return credentialOf(Reply.of({ method: 'POST', path }, response.body, 'application_credential'));
  }

  /** The credential with this id, or `undefined` when the user has none (404). */
  async get(id: string): Promise<ApplicationCredential | undefined> {
    const path = `${await this.collectionPath()}/${encodeURIComponent(id)}`;
    try {
      const response = await this.session.request({ method: 'GET', path });
      return credentialOf(Reply.of({ method: 'GET', path }, response.body, 'application_credential'));
    } catch (error) {
      if (isKeystoneError(error, 'not-found')) return undefined;
      throw error;
    }
  }

  /** The user's credential with this exact name, or `undefined`. */
  async findByName(name: string): Promise<ApplicationCredential | undefined> {
    const found = await this.query(`?name=${encodeURIComponent(name)}`);
    return found.find((credential) => credential.name === name);
  }

  /** All of the user's credentials. */
  async list(): Promise<ApplicationCredential[]> {
    return this.query('');
  }

  /** Deletes a credential; a credential that does not exist (404) counts as `already-gone`. */
  async delete(id: string): Promise<DeleteOutcome> {
    return deleteResource(this.session, `${await this.collectionPath()}/${encodeURIComponent(id)}`);
  }

  private async query(query: string): Promise<ApplicationCredential[]> {
    const path = await this.collectionPath();
    const response = await this.session.request({ method: 'GET', path: `${path}${query}` });
    return Reply.list({ method: 'GET', path }, response.body, 'application_credentials').map(credentialOf);
  }

  private async collectionPath(): Promise<string> {
    const userId = await this.session.userId();
    return this.session.transport.pathOf(`users/${encodeURIComponent(userId)}/application_credentials`);
  }
}

function credentialOf(reply: Reply): ApplicationCredential {
  return {
    id: reply.string('id'),
    name: reply.string('name'),
    description: reply.optionalString('description'),
    userId: reply.string('user_id'),
    projectId: reply.string('project_id'),
    expiresAt: reply.time('expires_at', parseKeystoneTime),
    roles: reply.objects('roles').map((role) => role.string('name')),
    unrestricted: reply.optionalBoolean('unrestricted') ?? false,
    accessRules: reply.objects('access_rules').map((rule) => ({ service: rule.string('service'), method: rule.string('method'), path: rule.string('path') })),
  };
}
