/**
 * Keystone as a credential pass reaches it (the lifecycle's CredentialPort): as the ordered user through the user's
 * shared session, or, when the pass may not reach it, a port that says why, or, when the ControlPlane is gone in a
 * teardown, one that holds nothing (spec, Deletion Semantics).
 */
import { credentialPort, type KeystoneSessions } from '../../keystone';
import type { CredentialPort } from '../../lifecycle/ports';
import type { UserConnection } from '../../plane/gates';

/**
 * Keystone as the ordered user, made by a face of its own (a test's fake): `fresh`, the pass follows a change the user
 * made and lists anew; `onAnswer`, to be called each time Keystone itself answered a call of the port.
 */
export type KeystoneFactory = (connection: UserConnection, prefix: string, options: { readonly fresh: boolean; readonly onAnswer?: () => void }) => CredentialPort;

/** How a pass reaches Keystone as the ordered user. */
export interface UserKeystone {
  /** The sessions the ordered users log in through, one token per (Keystone, user, project, password generation). */
  readonly sessions: KeystoneSessions;
  /** A port of the face's own instead of a session's. */
  readonly factory?: KeystoneFactory;
  /** The pass follows a change the user made (or retries one): it lists anew rather than through the known credentials. */
  readonly fresh: boolean;
  /** What each credential's description says it is for. */
  readonly description: string;
}

/**
 * Keystone as the ordered user over `connection`, for the credentials under `prefix`, through the user's shared
 * session (its token and its known credentials outlive the pass); `onAnswer`: called each time Keystone itself answered
 * a call of the port (src/keystone/credential-port.ts).
 */
export function userKeystone(how: UserKeystone, connection: UserConnection, prefix: string, onAnswer: () => void): CredentialPort {
  if (how.factory) return how.factory(connection, prefix, { fresh: how.fresh, onAnswer });
  const session = how.sessions.session({
    authUrl: connection.authUrl,
    ...(connection.caBundle ? { caBundle: connection.caBundle } : {}),
    auth: { method: 'password', user: { id: connection.userId }, password: connection.password, project: { id: connection.projectId } },
    ...(connection.passwordGeneration !== undefined ? { generation: connection.passwordGeneration } : {}),
  });
  return credentialPort(session, prefix, { description: how.description, onAnswer, ...(how.fresh ? { fresh: true } : {}) });
}

/** A Keystone port that cannot be reached: every call fails with the reason, so the pass repairs what needs no Keystone. */
export function unreachable(reason: string): CredentialPort {
  const fail = async (): Promise<never> => {
    throw new Error(reason);
  };
  return { list: fail, create: fail, delete: fail };
}

/**
 * The ControlPlane is gone: nothing is left to reach Keystone with (spec, Deletion Semantics: "one pass issues every
 * delete and releases the finalizer"). Keystone holds nothing this order could still delete.
 */
export function abandoned(): CredentialPort {
  return {
    list: async () => [],
    create: async () => {
      throw new Error('the ControlPlane is gone');
    },
    delete: async () => undefined,
  };
}
