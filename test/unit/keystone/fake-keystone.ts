/**
 * A scripted stand-in for Keystone's HTTP API: each call is answered by the next matching handler, and every request
 * is recorded for assertions.
 */
import type { FetchLike } from '../../../src/keystone';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

export type Handler = (request: RecordedRequest, init: RequestInit) => Response | Promise<Response>;

export const AUTH_URL = 'http://keystone.test:5000/v3';

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function keystoneError(status: number, message: string): Response {
  return json(status, { error: { code: status, message, title: 'Error' } });
}

/** A token reply as Keystone sends it. */
export function tokenReply(token: string, expiresAt: Date, extra: Record<string, unknown> = {}): Response {
  return json(
    201,
    {
      token: {
        methods: ['password'],
        expires_at: expiresAt.toISOString().replace('Z', '000Z'),
        issued_at: new Date().toISOString(),
        user: { id: 'u1', name: 'svc', domain: { id: 'default', name: 'Default' } },
        project: { id: 'p1', name: 'proj', domain: { id: 'default', name: 'Default' } },
        roles: [{ id: 'r1', name: 'member' }, { id: 'r2', name: 'reader' }],
        ...extra,
      },
    },
    { 'x-subject-token': token },
  );
}

export class FakeKeystone {
  readonly requests: RecordedRequest[] = [];
  private readonly routes: Array<{ method: string; path: RegExp; handler: Handler; times: number }> = [];

  /** Answers `method path` with `handler`, `times` times (default: always). Later routes do not shadow earlier ones. */
  on(method: string, path: RegExp, handler: Handler, times = Number.POSITIVE_INFINITY): this {
    this.routes.push({ method, path, handler, times });
    return this;
  }

  calls(method: string, path: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  readonly fetch: FetchLike = async (url, init) => {
    const parsed = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const request: RecordedRequest = {
      method: init.method ?? 'GET',
      url,
      path: `${parsed.pathname}${parsed.search}`,
      headers,
      body: typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
    };
    this.requests.push(request);
    const route = this.routes.find((r) => r.times > 0 && r.method === request.method && r.path.test(request.path));
    if (!route) return keystoneError(404, `no fake route for ${request.method} ${request.path}`);
    route.times -= 1;
    return route.handler(request, init);
  };
}
