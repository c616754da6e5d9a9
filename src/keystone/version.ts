/**
 * The identity API version an auth URL reports (`GET /v3` → `{"version": {"id": "v3.14", ...}}`), without a token.
 */
import { Reply } from './reply';
import type { KeystoneTransport } from './transport';

/** The version id the auth URL reports, e.g. `v3.14`. Throws a {@link KeystoneError} when Keystone cannot be reached. */
export async function identityVersion(transport: KeystoneTransport): Promise<string> {
  const path = transport.pathOf('');
  const response = await transport.send({ method: 'GET', path });
  return Reply.of({ method: 'GET', path }, response.body, 'version').string('id');
}
