/**
 * Keystone as a credential pass reaches it (the lifecycle's CredentialPort): as the ordered user through the user's
 * shared session, or, when the pass may not reach it, a port that says why, or, when the ControlPlane is gone in a
 * teardown, one that holds nothing (spec, Deletion Semantics).
 */
import { credentialPort, type KeystoneSessions } from '../../keystone';
import type { CredentialPort } from '../../lifecycle/ports';
import type { UserConnection } from '../../plane/gates';

/** How a pass reaches Keystone as the ordered user: its session, which lists anew when `fresh`. */
export interface UserKeystoneOptions {
  readonly prefix: string;
  /** The pass follows a change the user made (or retries one): it lists anew rather than through the known credentials. */
  readonly fresh: boolean;
  /** What each credential's description says it is for. */
  readonly description: string;
  /** Called each time Keystone itself answered a call of the port (src/keystone/credential-port.ts). */
  readonly onAnswer: () => void;
}

/**
 * Keystone as the ordered user, through the user's shared session (its token and its known credentials outlive the
 * pass; `fresh`: the pass lists anew).
 */
export function userKeystone(sessions: KeystoneSessions, connection: UserConnection, options: UserKeystoneOptions): CredentialPort {
  const session = sessions.session({
    authUrl: connection.authUrl,
    ...(connection.caBundle ? { caBundle: connection.caBundle } : {}),
    auth: { method: 'password', user: { id: connection.userId }, password: connection.password, project: { id: connection.projectId } },
    ...(connection.passwordGeneration !== undefined ? { generation: connection.passwordGeneration } : {}),
  });
  return credentialPort(session, options.prefix, { description: options.description, onAnswer: options.onAnswer, ...(options.fresh ? { fresh: true } : {}) });
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
