/**
 * The fake Keystone's admin API (./server.ts): domains and roles by name, users and projects (create, find by name
 * and domain, get, delete; a password changed), role grants on a project. As the real one: a name taken → 409, an
 * unknown id → 404, a changed password revokes the user's password tokens, a deleted user takes its grants,
 * credentials and tokens along.
 */
import { json, keystoneError, NOT_FOUND, notAllowed, type KeystoneState, type StoredProject, type StoredUser } from './state';

/** One request of the admin API (the caller holds the admin role); `parts` after `/v3`. */
export function adminApi(state: KeystoneState, method: string, parts: readonly string[], params: URLSearchParams, body: unknown): Response {
  const [collection, id, sub, subId, roles, roleId] = parts;
  if (collection === 'domains' && method === 'GET' && id === undefined) {
    const found = [...state.domains].filter(([, n]) => params.get('name') === null || n === params.get('name'));
    return json(200, { domains: found.map(([domainId, name]) => ({ id: domainId, name, enabled: true, description: '', options: {} })), links: {} });
  }
  if (collection === 'roles' && method === 'GET' && id === undefined) {
    const found = [...state.roles].filter(([, n]) => params.get('name') === null || n === params.get('name'));
    return json(200, { roles: found.map(([rid, name]) => ({ id: rid, name, domain_id: null, description: null, options: {} })), links: {} });
  }
  if (collection === 'projects' && sub === 'users' && roles === 'roles' && subId !== undefined && roleId !== undefined) return roleGrant(state, method, id, subId, roleId);
  if (collection === 'users' && sub === undefined) return users(state, method, id, params, body);
  if (collection === 'projects' && sub === undefined) return projects(state, method, id, params, body);
  return keystoneError(404, NOT_FOUND);
}

/** A list filtered by `name` and `domain_id`, as the query gives them. */
function named<T extends { name: string; domainId: string }>(items: Iterable<T>, params: URLSearchParams): T[] {
  const name = params.get('name');
  const domainId = params.get('domain_id');
  return [...items].filter((i) => (name === null || i.name === name) && (domainId === null || i.domainId === domainId));
}

function users(state: KeystoneState, method: string, id: string | undefined, params: URLSearchParams, body: unknown): Response {
  if (id === undefined && method === 'GET') return json(200, { users: named(state.users.values(), params).map((u) => state.userBody(u)), links: {} });
  if (id === undefined && method === 'POST') {
    const input = (body as { user?: { name?: string; domain_id?: string; password?: string; description?: string } } | undefined)?.user ?? {};
    const domainId = input.domain_id ?? 'default';
    const name = input.name ?? '';
    if ([...state.users.values()].some((u) => u.name === name && u.domainId === domainId)) {
      return keystoneError(409, `Conflict occurred attempting to store user - Duplicate entry found with name ${name} at domain ID ${domainId}.`);
    }
    const user: StoredUser = { id: state.next('user'), name, domainId, password: input.password ?? '', ...(input.description !== undefined ? { description: input.description } : {}) };
    state.users.set(user.id, user);
    return json(201, { user: state.userBody(user) });
  }
  const user = id !== undefined ? state.users.get(id) : undefined;
  if (!user) return keystoneError(404, `Could not find user: ${id ?? ''}.`);
  switch (method) {
    case 'GET':
      return json(200, { user: state.userBody(user) });
    case 'PATCH': {
      const password = (body as { user?: { password?: string } } | undefined)?.user?.password;
      if (password !== undefined) {
        user.password = password;
        state.revoke((t) => t.userId === user.id && t.credentialId === undefined);
      }
      return json(200, { user: state.userBody(user) });
    }
    case 'DELETE':
      state.users.delete(user.id);
      for (const grant of [...state.grants]) if (grant.split('/')[1] === user.id) state.grants.delete(grant);
      for (const c of [...state.credentials.values()]) if (c.userId === user.id) state.credentials.delete(c.id);
      state.revoke((t) => t.userId === user.id);
      return json(204, undefined);
    default:
      return notAllowed();
  }
}

function projects(state: KeystoneState, method: string, id: string | undefined, params: URLSearchParams, body: unknown): Response {
  if (id === undefined && method === 'GET') return json(200, { projects: named(state.projects.values(), params).map((p) => state.projectBody(p)), links: {} });
  if (id === undefined && method === 'POST') {
    const input = (body as { project?: { name?: string; domain_id?: string; description?: string; tags?: string[] } } | undefined)?.project ?? {};
    const domainId = input.domain_id ?? 'default';
    const name = input.name ?? '';
    if ([...state.projects.values()].some((p) => p.name === name && p.domainId === domainId)) {
      return keystoneError(409, `Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain : ${name}.`);
    }
    const project: StoredProject = { id: state.next('project'), name, domainId, tags: input.tags ?? [], ...(input.description !== undefined ? { description: input.description } : {}) };
    state.projects.set(project.id, project);
    return json(201, { project: state.projectBody(project) });
  }
  const project = id !== undefined ? state.projects.get(id) : undefined;
  if (!project) return keystoneError(404, `Could not find project: ${id ?? ''}.`);
  if (method === 'GET') return json(200, { project: state.projectBody(project) });
  if (method !== 'DELETE') return notAllowed();
  state.projects.delete(project.id);
  for (const grant of [...state.grants]) if (grant.startsWith(`${project.id}/`)) state.grants.delete(grant);
  state.revoke((t) => t.projectId === project.id);
  return json(204, undefined);
}

function roleGrant(state: KeystoneState, method: string, projectId: string, userId: string, roleId: string): Response {
  if (!state.projects.has(projectId)) return keystoneError(404, `Could not find project: ${projectId}.`);
  if (!state.users.has(userId)) return keystoneError(404, `Could not find user: ${userId}.`);
  if (!state.roles.has(roleId)) return keystoneError(404, `Could not find role: ${roleId}.`);
  const key = `${projectId}/${userId}/${roleId}`;
  const missing = () => keystoneError(404, `Could not find role assignment with role: ${roleId}, user or group: ${userId}, project, domain, or system: ${projectId}.`);
  switch (method) {
    case 'PUT':
      state.grants.add(key);
      return json(204, undefined);
    case 'HEAD':
      return state.grants.has(key) ? json(204, undefined) : missing();
    case 'DELETE':
      if (!state.grants.delete(key)) return missing();
      state.revoke((t) => t.userId === userId && t.projectId === projectId && t.credentialId === undefined);
      return json(204, undefined);
    default:
      return notAllowed();
  }
}
