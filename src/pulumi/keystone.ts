/**
 * Keystone as the Pulumi verbs reach it: a credential port over a session shared by the verbs in flight.
 */
import { createHash } from 'node:crypto';
import { credentialPort } from '../keystone/credential-port';
import { KeystoneSession } from '../keystone/session';
import type { CredentialPort } from '../lifecycle';
import type { ResolvedConnection } from './connection';

/** Opens the Keystone port of a resource's credentials; `fresh`: its list observes Keystone as it is now (`read`). */
export type OpenKeystone = (connection: ResolvedConnection, prefix: string, options?: { readonly fresh?: boolean }) => { port: CredentialPort; close(): Promise<void> };

/**
 * Sessions shared by the verbs in flight over the same connection: Pulumi runs the creates and updates of a program's
 * resources in parallel in one provider process, and each would otherwise log in on its own (N logins for N
 * credentials). A session lives while a verb uses it and is closed by the last one, so nothing outlives the verbs;
 * a verb that starts later logs in again. The key is a digest of the session options (the password among them), so a
 * changed password or endpoint is a new session, and the options themselves are not kept beyond the session.
 */
export function sharedSessions(): OpenKeystone {
  const shared = new Map<string, { session: KeystoneSession; users: number }>();
  return (connection: ResolvedConnection, prefix: string, options: { readonly fresh?: boolean } = {}) => {
    const key = createHash('sha256').update(JSON.stringify(connection.session)).digest('hex');
    let entry = shared.get(key);
    if (!entry) shared.set(key, (entry = { session: new KeystoneSession(connection.session), users: 0 }));
    entry.users++;
    const mine = entry;
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      if (--mine.users > 0) return;
      if (shared.get(key) === mine) shared.delete(key);
      await mine.session.close();
    };
    // The verbs of one up start within milliseconds of each other: their observations share one list of the user's
    // credentials (a list costs Keystone as much as a login), joined for 20 ms, and kept current by the verbs' own
    // creates and deletes while the session lives (src/keystone/known-credentials.ts). A refresh's `read` lists anew.
    return { port: credentialPort(mine.session, prefix, { description: 'managed by keystone-appcred (Pulumi)', listWindowMs: 20, ...(options.fresh ? { fresh: true } : {}) }), close };
  };
}
