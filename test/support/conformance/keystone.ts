/**
 * One call sequence on a Keystone, through the project's own client (src/keystone), as a transcript: what each call
 * returned, in the fields the code reads, or how it failed (the error's kind and status). Run on the real Keystone and
 * on the fake (test/support/fake-keystone/), the transcripts must be equal (test/e2e/fakes-conformance.test.ts); names,
 * ids and times are replaced by stable placeholders, so two Keystones with other ids compare.
 *
 * The sequence covers what the operator and the Pulumi provider rely on: the version; a project, a user with a
 * password and a role grant (and each looked up, and refused twice); the user's token and its roles; application
 * credentials with a client-supplied secret, an expiry and a role subset (created, listed, by name, read, refused for a
 * taken name, a past expiry, a role not held, a role that does not exist), a login with one (restricted, its roles), a
 * wrong secret, its token refused to manage credentials, another user's credentials refused; deletes (again: gone, its
 * login and its token refused); a password change; the grant revoked; no token at all; the user and project deleted.
 */
import { transcript, type Transcript } from './transcript';
import { ApplicationCredentials, KeystoneSession, KeystoneTransport, Projects, Roles, Users, identityVersion, isKeystoneError, issueToken, validateToken, type FetchLike } from '../../../src/keystone';

/** A Keystone to run the sequence on: its auth URL, its bootstrap admin, and (for the fake) the fetch that reaches it. */
export interface KeystoneSubject {
  readonly authUrl: string;
  readonly admin: { readonly user: string; readonly password: string; readonly project: string };
  readonly fetch?: FetchLike;
  /** Names unique to this run (the real Keystone is shared with other tests). */
  readonly names: { readonly project: string; readonly user: string; readonly other: string };
}


/** Runs the sequence; every step's outcome, normalized. */
export async function keystoneTranscript(subject: KeystoneSubject): Promise<Transcript> {
  const placeholders = new Map<string, string>();
  const stable = (value: string, kind: string) => {
    if (!placeholders.has(value)) placeholders.set(value, `<${kind}${placeholders.size}>`);
    return placeholders.get(value) as string;
  };
  const { out, step } = transcript((error) => (isKeystoneError(error) ? { error: error.kind, status: error.status } : undefined), (answer) => normalize(answer, stable));
  const connection = { authUrl: subject.authUrl, ...(subject.fetch ? { fetch: subject.fetch } : {}) };
  const session = (auth: ConstructorParameters<typeof KeystoneSession>[0]['auth']) => new KeystoneSession({ ...connection, auth });
  const transport = new KeystoneTransport(connection);
  const admin = session({ method: 'password', user: { name: subject.admin.user, domainName: 'Default' }, password: subject.admin.password, project: { name: subject.admin.project, domainName: 'Default' } });
  const { names } = subject;
  const password = 'conformance-Password-1';

  await step('version', async () => (await identityVersion(transport)).startsWith('v3.'));
  await step('admin token roles', async () => [...(await admin.token()).roles].sort());
  const project = await new Projects(admin).create({ name: names.project, domainId: 'default', description: 'conformance', tags: ['kac-test'] });
  out.push(['project created', normalize({ name: project.name, tags: project.tags }, stable)]);
  await step('project by name', async () => (await new Projects(admin).findByName(names.project))?.id === project.id);
  await step('project again', () => new Projects(admin).create({ name: names.project, domainId: 'default', description: 'conformance', tags: [] }));
  const user = await new Users(admin).create({ name: names.user, domainId: 'default', password, description: 'conformance' });
  await step('user by name', async () => (await new Users(admin).findByName(names.user))?.id === user.id);
  await step('user again', () => new Users(admin).create({ name: names.user, domainId: 'default', password, description: 'conformance' }));
  await step('unknown user', () => new Users(admin).get('0123456789abcdef0123456789abcdef'));
  const member = await new Roles(admin).findByName('member');
  const grant = { userId: user.id, projectId: project.id, roleId: member?.id ?? '' };
  await step('role granted?', () => new Roles(admin).hasOnProject(grant));
  await step('login without a role', () => issueToken(transport, { method: 'password', user: { id: user.id }, password, project: { id: project.id } }));
  await step('grant', () => new Roles(admin).grantOnProject(grant));
  await step('role granted', () => new Roles(admin).hasOnProject(grant));
  const mine = session({ method: 'password', user: { id: user.id }, password, project: { id: project.id } });
  await step('user token', async () => {
    const token = await mine.token();
    return { roles: [...token.roles].sort(), user: token.userId === user.id, project: token.projectId === project.id, expires: token.expiresAt > new Date() };
  });
  await step('wrong password', () => issueToken(transport, { method: 'password', user: { id: user.id }, password: 'wrong', project: { id: project.id } }));

  const credentials = new ApplicationCredentials(mine);
  const expiresAt = new Date(Date.now() + 3_600_000);
  const secret = 'conformance-secret-0123456789';
  await step('create credential', () => credentials.create({ name: 'cred-1', description: 'managed; owner=x', secret, expiresAt, roles: ['reader'] }));
  const created = await credentials.findByName('cred-1');
  await step('list', async () => (await credentials.list()).map((c) => c.name));
  await step('by name', async () => created);
  await step('get', () => credentials.get(created?.id ?? ''));
  await step('name taken', () => credentials.create({ name: 'cred-1', secret, expiresAt }));
  await step('expiry past', () => credentials.create({ name: 'cred-2', secret, expiresAt: new Date(Date.now() - 60_000) }));
  await step('role not held', () => credentials.create({ name: 'cred-3', secret, roles: ['admin'] }));
  await step('role unknown', () => credentials.create({ name: 'cred-4', secret, roles: ['no-such-role'] }));
  await step('default roles', async () => {
    const c = await credentials.create({ name: 'cred-5', secret });
    return { roles: [...c.roles].sort(), expiresAt: c.expiresAt, unrestricted: c.unrestricted };
  });
  const login = () => issueToken(transport, { method: 'application-credential', id: created?.id ?? '', secret });
  await step('credential login', async () => {
    const token = await login();
    return { roles: token.roles, credential: token.applicationCredential, capped: token.expiresAt <= expiresAt };
  });
  await step('credential login by name', async () => (await issueToken(transport, { method: 'application-credential', name: 'cred-1', user: { id: user.id }, secret })).applicationCredential?.name);
  await step('wrong secret', () => issueToken(transport, { method: 'application-credential', id: created?.id ?? '', secret: 'wrong-secret' }));
  const viaCredential = new ApplicationCredentials(session({ method: 'application-credential', id: created?.id ?? '', secret }));
  await step('restricted creates', () => viaCredential.create({ name: 'cred-6', secret }));
  await step('restricted deletes', () => viaCredential.delete(created?.id ?? ''));
  const other = await new Users(admin).create({ name: names.other, domainId: 'default', password, description: 'conformance' });
  await new Roles(admin).grantOnProject({ ...grant, userId: other.id });
  const others = session({ method: 'password', user: { id: other.id }, password, project: { id: project.id } });
  const theirs = transport.pathOf(`users/${encodeURIComponent(user.id)}/application_credentials`);
  await step("another user's credentials listed", () => others.request({ method: 'GET', path: theirs }));
  await step("another user's credential created", () => others.request({ method: 'POST', path: theirs, body: { application_credential: { name: 'x', secret } } }));
  const issued = await login();
  await step('delete credential', () => credentials.delete(created?.id ?? ''));
  await step('delete again', () => credentials.delete(created?.id ?? ''));
  await step('get deleted', () => credentials.get(created?.id ?? ''));
  await step('login deleted', login);
  await step('its token', async () => validateToken(transport, (await admin.token()).token, issued.token));
  await step('no token', () => transport.send({ method: 'GET', path: transport.pathOf(`users/${encodeURIComponent(user.id)}`) }));

  await step('password change', () => new Users(admin).updatePassword(user.id, `${password}-2`));
  await step('old password', () => issueToken(transport, { method: 'password', user: { id: user.id }, password, project: { id: project.id } }));
  await step('revoke', () => new Roles(admin).revokeOnProject(grant));
  await step('revoke again', () => new Roles(admin).revokeOnProject(grant));
  await step('role granted after revoke', () => new Roles(admin).hasOnProject(grant));
  await step('delete user', () => new Users(admin).delete(user.id));
  await step('delete user again', () => new Users(admin).delete(user.id));
  await step('delete other user', () => new Users(admin).delete(other.id));
  await step('delete project', () => new Projects(admin).delete(project.id));
  await step('user gone', () => new Users(admin).findByName(names.user));
  return out;
}

/** Ids and names become placeholders, times a flag of whether they are set; booleans, numbers and other strings stay. */
function normalize(value: unknown, stable: (value: string, kind: string) => string): unknown {
  if (value instanceof Date) return 'a time';
  if (typeof value === 'string') return /^[0-9a-f]{32}$/.test(value) ? stable(value, 'id') : value.startsWith('gAAAA') ? '<token>' : value;
  if (Array.isArray(value)) return value.map((v) => normalize(v, stable));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, stable)]));
  return value;
}
