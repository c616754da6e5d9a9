/**
 * Getting a token: `POST /v3/auth/tokens` with a password (scoped to a project) or an application credential (scoped by
 * Keystone to the credential's project), and reading what the token says about itself.
 */
import { parseKeystoneTime } from './time';
import { KeystoneTransport, type KeystoneConnectionOptions } from './transport';
import { Reply, type ReplyContext } from './reply';

/** A user or project by id, or by name within a domain (by domain id or name). */
export type NamedRef =
  | { readonly id: string }
  | {
      readonly name: string;
      /** @default "default" when `domainName` is not given either */
      readonly domainId?: string;
      readonly domainName?: string;
    };

/** Password authentication, scoped to a project. */
export interface PasswordAuth {
  readonly method: 'password';
  readonly user: NamedRef;
  readonly password: string;
  readonly project: NamedRef;
}

/**
 * Application-credential authentication; the token is scoped to the credential's project. The credential is named by
 * its id, or by its name with its user (a name is unique per user only).
 */
export type ApplicationCredentialAuth = {
  readonly method: 'application-credential';
  readonly secret: string;
} & ({ readonly id: string } | { readonly name: string; readonly user: NamedRef });

/** How a session authenticates. */
export type KeystoneAuth = PasswordAuth | ApplicationCredentialAuth;

/** The application credential a token was issued from. */
export interface TokenApplicationCredential {
  readonly id: string;
  readonly name: string;
  /** Whether the credential may not manage other application credentials (always true for this project's). */
  readonly restricted: boolean;
}

/** A token and what Keystone says about it. */
export interface IssuedToken {
  /** The token (`X-Subject-Token`). Never log it. */
  readonly token: string;
  readonly expiresAt: Date;
  readonly userId: string;
  /** The project the token is scoped to. */
  readonly projectId: string;
  /** Its name, and its domain's name, as the token shows them. */
  readonly projectName?: string;
  readonly projectDomainName?: string;
  /** Names of the token's roles on the project, implied ones included. */
  readonly roles: readonly string[];
  /** Set when the token was issued from an application credential. */
  readonly applicationCredential?: TokenApplicationCredential;
}

/** The result of {@link authenticateApplicationCredential}. */
export interface ApplicationCredentialLogin extends IssuedToken {
  readonly applicationCredential: TokenApplicationCredential;
}

const TOKENS_PATH = 'auth/tokens';

/** Issues a token. Throws `unauthorized` for a wrong password or secret, `not-found` for an unknown credential id. */
export async function issueToken(transport: KeystoneTransport, auth: KeystoneAuth): Promise<IssuedToken> {
  const path = transport.pathOf(TOKENS_PATH);
  const sensitive = auth.method === 'password' ? [auth.password] : [auth.secret];
  const response = await transport.send({ method: 'POST', path, body: requestBodyOf(auth), sensitive });
  const context: ReplyContext = { method: 'POST', path };
  const token = response.headers.get('x-subject-token');
  if (!token) throw Reply.missing(context, 'the reply has no X-Subject-Token header');
  return tokenOf(context, token, response.body);
}

/**
 * Validates `subjectToken` with `authToken` (`GET /v3/auth/tokens`) and returns what Keystone says about it. A revoked
 * token, e.g. one issued from an application credential that was deleted since, fails with kind `not-found`.
 */
export async function validateToken(
  transport: KeystoneTransport,
  authToken: string,
  subjectToken: string,
): Promise<IssuedToken> {
  const path = transport.pathOf(TOKENS_PATH);
  const response = await transport.send({ method: 'GET', path, token: authToken, subjectToken });
  return tokenOf({ method: 'GET', path }, subjectToken, response.body);
}

/**
 * Logs in with an application credential, e.g. to verify a delivered credential works. The token is scoped to the
 * credential's project. Throws `unauthorized` for a wrong secret or an expired credential and `not-found` for an
 * unknown or deleted credential id. Use the token with {@link KeystoneTransport.send} or a
 * {@link KeystoneSession} with `method: 'application-credential'`.
 */
export async function authenticateApplicationCredential(
  options: KeystoneConnectionOptions & { readonly id: string; readonly secret: string },
): Promise<ApplicationCredentialLogin> {
  const transport = new KeystoneTransport(options);
  try {
    const issued = await issueToken(transport, { method: 'application-credential', id: options.id, secret: options.secret });
    const path = transport.pathOf(TOKENS_PATH);
    if (!issued.applicationCredential) {
      throw Reply.missing({ method: 'POST', path }, 'the token names no application credential');
    }
    return { ...issued, applicationCredential: issued.applicationCredential };
  } finally {
    await transport.close();
  }
}

function requestBodyOf(auth: KeystoneAuth): unknown {
  if (auth.method === 'application-credential') {
    const credential = 'id' in auth ? { id: auth.id } : { name: auth.name, user: refOf(auth.user) };
    return {
      auth: {
        identity: {
          methods: ['application_credential'],
          application_credential: { ...credential, secret: auth.secret },
        },
      },
    };
  }
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { ...refOf(auth.user), password: auth.password } } },
      scope: { project: refOf(auth.project) },
    },
  };
}

function refOf(ref: NamedRef): Record<string, unknown> {
  if ('id' in ref) return { id: ref.id };
  const domain = ref.domainId !== undefined ? { id: ref.domainId } : ref.domainName !== undefined ? { name: ref.domainName } : { id: 'default' };
  return { name: ref.name, domain };
}

/** The project's name and its domain's name, where the token shows them. */
function optionalNames(project: Reply): Pick<IssuedToken, 'projectName' | 'projectDomainName'> {
  const name = project.optionalString('name');
  const domain = project.optionalObject('domain')?.optionalString('name');
  return { ...(name !== undefined ? { projectName: name } : {}), ...(domain !== undefined ? { projectDomainName: domain } : {}) };
}

function tokenOf(context: ReplyContext, token: string, body: unknown): IssuedToken {
  const reply = Reply.of(context, body, 'token');
  const expiresAt = reply.time('expires_at', parseKeystoneTime);
  if (!expiresAt) throw Reply.missing(context, 'the token has no expires_at');
  const project = reply.optionalObject('project');
  if (!project) throw Reply.missing(context, 'the token is not scoped to a project');
  const user = reply.optionalObject('user');
  if (!user) throw Reply.missing(context, 'the token names no user');
  const credential = reply.optionalObject('application_credential');
  return {
    token,
    expiresAt,
    userId: user.string('id'),
    projectId: project.string('id'),
    ...optionalNames(project),
    roles: reply.objects('roles').map((role) => role.string('name')),
    applicationCredential: credential && {
      id: credential.string('id'),
      name: credential.string('name'),
      restricted: credential.optionalBoolean('restricted') ?? false,
    },
  };
}
