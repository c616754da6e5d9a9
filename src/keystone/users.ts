/**
 * Users (`/v3/users`), managed with an admin session. The testbed, the demo and the tests create a service user per
 * scenario; production code only ever acts as a user it was given.
 */
import { isKeystoneError } from './errors';
import { Reply } from './reply';
import type { KeystoneSession } from './session';
import { deleteResource, type DeleteOutcome } from './delete';

/** A Keystone user. */
export interface User {
  readonly id: string;
  readonly name: string;
  readonly domainId: string;
  readonly enabled: boolean;
  readonly defaultProjectId?: string;
  /** Free text; the identity plane records its ownership marker here (see src/plane/naming.ts). */
  readonly description?: string;
}

/** What {@link Users.create} needs. */
export interface UserInput {
  readonly name: string;
  readonly password: string;
  /** @default "default" */
  readonly domainId?: string;
  readonly description?: string;
  readonly defaultProjectId?: string;
}

/** Creates, finds, re-keys and deletes users (admin session). */
export class Users {
  constructor(private readonly session: KeystoneSession) {}

  /** Creates an enabled user. Throws `conflict` when the domain already has a user with that name. */
  async create(input: UserInput): Promise<User> {
    const user: Record<string, unknown> = {
      name: input.name,
      password: input.password,
      domain_id: input.domainId ?? 'default',
      enabled: true,
    };
    if (input.description !== undefined) user.description = input.description;
    if (input.defaultProjectId !== undefined) user.default_project_id = input.defaultProjectId;
    const path = this.session.transport.pathOf('users');
    const response = await this.session.request({ method: 'POST', path, body: { user }, sensitive: [input.password] });
    return userOf(Reply.of({ method: 'POST', path }, response.body, 'user'));
  }

  /** The user with this id, or `undefined`. */
  async get(id: string): Promise<User | undefined> {
    const path = this.session.transport.pathOf(`users/${encodeURIComponent(id)}`);
    try {
      const response = await this.session.request({ method: 'GET', path });
      return userOf(Reply.of({ method: 'GET', path }, response.body, 'user'));
    } catch (error) {
      if (isKeystoneError(error, 'not-found')) return undefined;
      throw error;
    }
  }

  /** The user with this exact name in the domain, or `undefined`. */
  async findByName(name: string, domainId = 'default'): Promise<User | undefined> {
    const path = this.session.transport.pathOf('users');
    const query = `?name=${encodeURIComponent(name)}&domain_id=${encodeURIComponent(domainId)}`;
    const response = await this.session.request({ method: 'GET', path: `${path}${query}` });
    return Reply.list({ method: 'GET', path }, response.body, 'users')
      .map(userOf)
      .find((user) => user.name === name);
  }

  /** Sets a new password (as admin, without the old one). */
  async updatePassword(id: string, password: string): Promise<void> {
    const path = this.session.transport.pathOf(`users/${encodeURIComponent(id)}`);
    await this.session.request({ method: 'PATCH', path, body: { user: { password } }, sensitive: [password] });
  }

  /** Deletes a user (with its application credentials); a missing user counts as `already-gone`. */
  async delete(id: string): Promise<DeleteOutcome> {
    return deleteResource(this.session, `users/${encodeURIComponent(id)}`);
  }
}

function userOf(reply: Reply): User {
  return {
    id: reply.string('id'),
    name: reply.string('name'),
    domainId: reply.string('domain_id'),
    enabled: reply.optionalBoolean('enabled') ?? true,
    defaultProjectId: reply.optionalString('default_project_id'),
    description: reply.optionalString('description') || undefined,
  };
}
