/**
 * Who the API server takes this client for: a `SelfSubjectReview` (authentication.k8s.io/v1, served since Kubernetes
 * 1.28 and allowed to every authenticated identity by the `system:basic-user` role). It is the cheapest request that
 * proves the credentials, so a process can check them once at start instead of failing in every informer later.
 */
import { KubeApiError } from './errors';
import type { Transport } from './transport';

/** The identity the API server authenticated. */
export interface Identity {
  readonly username: string;
  readonly groups: readonly string[];
}

const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

/**
 * The identity of the transport's credentials; `undefined` when the API server does not serve SelfSubjectReview (older
 * than 1.28, or the API turned off) or forbids it, where nothing is known but the credentials were accepted. Rejects
 * with a {@link KubeApiError} for any other answer (401: the credentials are refused) and with the transport's error
 * when the API server does not answer.
 */
export async function whoAmI(transport: Transport): Promise<Identity | undefined> {
  const response = await transport.request({ method: 'POST', path: PATH, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  if (response.status === 404 || response.status === 403) return undefined;
  if (response.status !== 200 && response.status !== 201) throw KubeApiError.from(response.status, response.body, `POST ${PATH}`);
  const user = (response.body as { status?: { userInfo?: { username?: unknown; groups?: unknown } } }).status?.userInfo;
  return {
    username: typeof user?.username === 'string' ? user.username : '',
    groups: Array.isArray(user?.groups) ? user.groups.filter((g): g is string => typeof g === 'string') : [],
  };
}

/**
 * The ServiceAccount a service account token was issued to, from its `sub` claim (`system:serviceaccount:<ns>:<name>`),
 * for messages; undefined when the token is not such a JWT. The claim is read, never verified, and the token itself is
 * never returned.
 */
export function serviceAccountOfToken(token: string): { readonly namespace: string; readonly name: string } | undefined {
  try {
    const sub = (JSON.parse(Buffer.from(token.trim().split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    const m = typeof sub === 'string' ? /^system:serviceaccount:([^:]+):([^:]+)$/.exec(sub) : null;
    return m ? { namespace: m[1], name: m[2] } : undefined;
  } catch {
    return undefined;
  }
}
