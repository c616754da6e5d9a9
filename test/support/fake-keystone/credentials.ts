/**
 * The fake Keystone's application credentials (`/v3/users/{user_id}/application_credentials`, ./server.ts), as the
 * real one answers (/work/shared/notes/keystone.md): another user's path → 403; a restricted credential's token
 * creating or deleting → 403; a name the user has → 409; `expires_at` malformed or in the past → 400; a role that does
 * not exist → 404, one the token does not carry → 400; by default the token's roles; an unknown id → 404; a delete
 * revokes the credential's tokens.
 */
import { FORBIDDEN, json, keystoneError, notAllowed, type KeystoneState, type StoredCredential, type Token } from './state';

/** One request under a user's application credentials; `id` the credential's, when the path names one. */
export function credentialsApi(
  state: KeystoneState,
  request: { readonly method: string; readonly userId: string; readonly id?: string; readonly params: URLSearchParams; readonly body: unknown },
  caller: Token,
  onDelete: ((credential: StoredCredential) => void) | undefined,
): Response {
  const { method, userId, id } = request;
  if (caller.userId !== userId) return keystoneError(403, FORBIDDEN);
  const restricted = caller.credentialId !== undefined && !(state.credentials.get(caller.credentialId)?.unrestricted ?? false);
  const refused = () => keystoneError(403, "Using method 'application_credential' is not allowed for managing additional application credentials.");
  if (id === undefined && method === 'GET') {
    const name = request.params.get('name');
    const listed = state.credentials.ofUser(userId).filter((c) => name === null || c.name === name);
    return json(200, { application_credentials: listed.map((c) => state.credentialBody(c)), links: { self: '', previous: null, next: null } });
  }
  if (id === undefined && method === 'POST') return restricted ? refused() : create(state, userId, request.body, caller);
  const credential = id !== undefined ? state.credentials.get(id) : undefined;
  const missing = () => keystoneError(404, `Could not find Application Credential: ${id ?? ''}.`);
  if (method === 'GET') return credential && credential.userId === userId ? json(200, { application_credential: state.credentialBody(credential) }) : missing();
  if (method !== 'DELETE') return notAllowed();
  if (restricted) return refused();
  if (!credential || credential.userId !== userId) return missing();
  onDelete?.(credential);
  state.credentials.delete(credential.id);
  state.revoke((t) => t.credentialId === credential.id);
  return json(204, undefined);
}

function create(state: KeystoneState, userId: string, body: unknown, caller: Token): Response {
  const input = (body as { application_credential?: Record<string, unknown> } | undefined)?.application_credential ?? {};
  const name = typeof input.name === 'string' ? input.name : '';
  if (state.credentials.ofUser(userId).some((c) => c.name === name)) {
    return keystoneError(409, `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${name}.`);
  }
  let expiresAt: Date | undefined;
  if (typeof input.expires_at === 'string') {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/.test(input.expires_at)) return keystoneError(400, 'Timestamp not in expected format.');
    expiresAt = new Date(input.expires_at.endsWith('Z') ? input.expires_at : `${input.expires_at}Z`);
    if (expiresAt <= state.now()) return keystoneError(400, "The 'expires_at' must not be before now.");
  }
  const held = state.rolesOf(userId, caller.projectId);
  const asked = Array.isArray(input.roles) ? (input.roles as { name?: string }[]).map((r) => r.name ?? '') : undefined;
  for (const role of asked ?? []) {
    if (![...state.roles.values()].includes(role)) return keystoneError(404, `Could not find role: ${role}.`);
    if (!held.includes(role)) return keystoneError(400, 'Cannot create an application credential with unassigned role');
  }
  const id = state.next('credential');
  const stored: StoredCredential = {
    id,
    name,
    userId,
    projectId: caller.projectId,
    secret: typeof input.secret === 'string' ? input.secret : state.id(`secret-${id}`),
    ...(typeof input.description === 'string' ? { description: input.description } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    roles: asked ?? held,
    accessRules: Array.isArray(input.access_rules) ? (input.access_rules as StoredCredential['accessRules']).map((r) => ({ service: r.service, method: r.method, path: r.path })) : [],
    unrestricted: input.unrestricted === true,
  };
  state.credentials.set(id, stored);
  return json(201, { application_credential: { ...state.credentialBody(stored), secret: stored.secret } });
}
