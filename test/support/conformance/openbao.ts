/**
 * One call sequence on OpenBao's KV v2, through the project's backup client (src/backup/openbao.ts) and the raw calls
 * whose answers it reads, as a transcript (see ./keystone.ts): the real dev server and the fake
 * (test/support/fake-openbao.ts) must give equal ones (test/e2e/fakes-conformance.test.ts).
 *
 * Covered: an empty path (no document, no owner); a write with an owner (the owner in the path's metadata, the
 * document read back); a rewrite (a new version, the metadata's current version); check-and-set (a `cas` that does not
 * match refused with 400, one that does accepted); a removal (nothing left, removing again fine); a token OpenBao does
 * not know (403); a mount that does not exist.
 */
import { OpenBaoBackup, OpenBaoError } from '../../../src/backup/openbao';
import { transcript, type Transcript } from './transcript';

export interface OpenBaoSubject {
  readonly address: string;
  readonly token: string;
  readonly mount: string;
  /** A path unique to this run. */
  readonly path: string;
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

export async function openBaoTranscript(subject: OpenBaoSubject): Promise<Transcript> {
  const { out, step } = transcript((error) => (error instanceof OpenBaoError ? { error: 'OpenBaoError', status: error.status } : undefined));
  const fetchImpl = subject.fetch ?? ((url: string, init: RequestInit) => fetch(url, init));
  const backup = (options: { token?: string; mount?: string; owner?: string } = {}) =>
    new OpenBaoBackup({ address: subject.address, token: options.token ?? subject.token, mount: options.mount ?? subject.mount, path: subject.path, fetch: fetchImpl, ...(options.owner ? { owner: options.owner } : {}) });
  const raw = async (method: string, kind: 'data' | 'metadata', body?: unknown) => {
    const response = await fetchImpl(`${subject.address}/v1/${subject.mount}/${kind}/${subject.path}`, {
      method,
      headers: { 'x-vault-token': subject.token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };
  const document = (id: string) => ({ 'clouds.yaml': `clouds: {id: ${id}}\n`, application_credential_id: id, application_credential_secret: `secret-of-${id}` });

  await step('empty: document', () => backup().readDocument());
  await step('empty: owner', () => backup().readOwner());
  await step('empty: raw data', async () => (await raw('GET', 'data')).status);
  await step('write with an owner', () => backup({ owner: 'owner-1' }).write(document('a')));
  await step('read back', () => backup().readDocument());
  await step('owner', () => backup({ owner: 'owner-1' }).readOwner());
  await step('rewrite', () => backup({ owner: 'owner-1' }).write(document('b')));
  await step('read the rewrite', () => backup().read());
  await step('metadata', async () => {
    const { status, body } = await raw('GET', 'metadata');
    const data = body?.data as { current_version?: number; custom_metadata?: Record<string, string> | null } | undefined;
    return { status, current: data?.current_version, owner: data?.custom_metadata?.owner };
  });
  await step('cas that does not match', async () => (await raw('POST', 'data', { data: document('c'), options: { cas: 1 } })).status);
  await step('cas that matches', async () => {
    const { status, body } = await raw('POST', 'data', { data: document('c'), options: { cas: 2 } });
    return { status, version: (body?.data as { version?: number } | undefined)?.version };
  });
  await step('cas 0 on a written path', async () => (await raw('POST', 'data', { data: document('d'), options: { cas: 0 } })).status);
  await step('remove', () => backup().remove());
  await step('removed: document', () => backup().readDocument());
  await step('removed: owner', () => backup().readOwner());
  await step('remove again', () => backup().remove());
  await step('cas 0 on an empty path', async () => (await raw('POST', 'data', { data: document('e'), options: { cas: 0 } })).status);
  await step('unknown token: read', () => backup({ token: 'hvs.not-a-token-of-this-openbao' }).read());
  await step('unknown token: write', () => backup({ token: 'hvs.not-a-token-of-this-openbao' }).write(document('f')));
  await step('no such mount', () => backup({ mount: 'no-such-mount' }).read());
  await step('cleanup', () => backup().remove());
  return out;
}
