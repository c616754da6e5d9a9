/**
 * The orders and the Keystone users they belong to: the objects the bench creates, the users made as the orders need
 * them, and the password the operator delivered for a user (for the bench's own logins).
 */
import type { KubeObject } from '../../test/support/kubectl';
import { API, CP_REF, NS, createAll, ok, untilReady } from './api';
import type { Run } from './run';

/**
 * Orders per Keystone user. A pass lists the user's credentials, and Keystone's list costs about 3 ms per credential
 * held (measured at 100 per user: 300 ms per list on this machine), so this is kept as a service user's would be.
 */
export const PER_USER = 10;

/** A KeystoneUser `bench-<name>` of the control plane. */
export const user = (name: string): KubeObject => ({ apiVersion: API, kind: 'KeystoneUser', metadata: { name, namespace: NS }, spec: { controlPlaneRef: CP_REF, userName: `bench-${name}` } });
/** The member role on the project for a user. */
export const assignment = (userName: string): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneRoleAssignment',
  metadata: { name: `${userName}-member`, namespace: NS },
  spec: { controlPlaneRef: CP_REF, userRef: { name: userName }, projectRef: { name: 'proj' }, role: 'member' },
});
/** An order of `userName`'s, labelled `bench/batch=<label>` (a batch is waited for by its label). */
export const order = (name: string, userName: string, label: string, gracePeriod = '24h'): KubeObject => ({
  apiVersion: API,
  kind: 'KeystoneApplicationCredential',
  metadata: { name, namespace: NS, labels: { 'bench/batch': label } },
  spec: { controlPlaneRef: CP_REF, userRef: { name: userName }, projectRef: { name: 'proj' }, rotation: { interval: '720h', gracePeriod } },
});

/** Users for orders [from, to): one per PER_USER orders; creates the missing ones and waits until they are Ready. */
export async function ensureUsers(to: number, made: Set<string>): Promise<void> {
  const needed: KubeObject[] = [];
  for (let u = 0; u * PER_USER < to; u++) {
    const name = `u${u}`;
    if (made.has(name)) continue;
    made.add(name);
    needed.push(user(name), assignment(name));
  }
  if (needed.length === 0) return;
  await createAll(needed.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bench/plane': 'yes' } } })));
  await untilReady('keystoneusers', 'bench/plane=yes', made.size, 300_000, 500);
  await untilReady('keystoneroleassignments', 'bench/plane=yes', made.size, 300_000, 500);
}

/** The user of the i-th order. */
export const userOf = (i: number) => `u${Math.floor(i / PER_USER)}`;

/**
 * Creates orders `o<n>` until `size` exist, their users made as they need them, and waits until each batch is Ready:
 * batches of 500, or of a twentieth of the size for a large one (each batch waits for its last orders, so fewer
 * batches keep the operator busier); how long each took on stderr. The batch label is `f<first order's number>`.
 */
export async function topUp(run: Run, size: number): Promise<void> {
  const most = Math.max(500, Math.ceil(size / 20));
  while (run.total < size) {
    const batch = Math.min(most, size - run.total);
    await ensureUsers(run.total + batch, run.users);
    const t0 = Date.now();
    await createAll(Array.from({ length: batch }, (_, k) => order(`o${run.total + k}`, userOf(run.total + k), `f${run.total}`)));
    await untilReady('keystoneapplicationcredentials', `bench/batch=f${run.total}`, batch, 3_600_000, 1000);
    process.stderr.write(`[bench] ${batch} more orders converged in ${Date.now() - t0} ms (total ${run.total + batch})\n`);
    run.total += batch;
  }
}

/** The password the operator delivered for a KeystoneUser (never printed). */
export async function passwordOf(name: string): Promise<string> {
  const secret = JSON.parse(await ok('GET', `/api/v1/namespaces/${NS}/secrets/${name}-credentials`)) as { data: Record<string, string> };
  return Buffer.from(secret.data.password, 'base64').toString('utf8');
}
