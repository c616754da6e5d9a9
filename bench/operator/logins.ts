/**
 * 2b. The logins of one user: 20 of its orders created, then all 20 rotated together; its logins counted at the proxy
 * (not estimated), goal one per token lifetime.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordedCall } from '../../test/support/recording-proxy';
import { NS, createAll, ok, path, ready, untilReady, type Order } from './api';
import { mix } from './convergence';
import { PER_USER, assignment, ensureUsers, order, passwordOf, user } from './orders';
import { quiet } from './process';
import type { Run } from './run';

/** Counts the logins of a user of its own with the operator running now; one row. */
export async function loginsOfOneUser(run: Run): Promise<void> {
  const { env, figures, users, keystone } = run;
  const { proxy } = env;
  const converged = run.total;
  await ensureUsers(converged + PER_USER * 3, users); // a user of its own beyond the others
  const solo = `u${Math.ceil(converged / PER_USER) + 2}`;
  if (!users.has(solo)) {
    users.add(solo);
    await createAll([user(solo), assignment(solo)].map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bench/plane': 'yes' } } })));
    await untilReady('keystoneusers', 'bench/plane=yes', users.size, 300_000, 500);
    await untilReady('keystoneroleassignments', 'bench/plane=yes', users.size, 300_000, 500);
  }
  await quiet(run.op, proxy);
  const markCreate = proxy.calls.length;
  await createAll(Array.from({ length: 20 }, (_, k) => order(`solo${k}`, solo, 'solo')));
  await untilReady('keystoneapplicationcredentials', 'bench/batch=solo', 20, 600_000, 200);
  await quiet(run.op, proxy);
  const markRotate = proxy.calls.length;
  await Promise.all(Array.from({ length: 20 }, (_, k) => ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/solo${k}`, { spec: { credentialGeneration: 2 } })));
  for (const deadline = Date.now() + 600_000; ; ) {
    const list = JSON.parse(await ok('GET', `${path('keystoneapplicationcredentials', NS)}?labelSelector=bench/batch%3Dsolo`)) as { items: Order[] };
    if (list.items.filter((o) => ready(o, 2)).length >= 20) break;
    if (Date.now() > deadline) throw new Error('the 20 orders of one user did not rotate in 10 minutes');
    await sleep(200);
  }
  await quiet(run.op, proxy);
  const password = await passwordOf(solo);
  const userId = ((await (await fetch(`${keystone.authUrl}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: `bench-${solo}`, domain: { name: 'Default' }, password } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }) })).json()) as { token: { user: { id: string } } }).token.user.id;
  const logins = (calls: readonly RecordedCall[]) => calls.filter((c) => c.login === userId).length;
  const created = logins(proxy.calls.slice(markCreate, markRotate));
  const rotated = logins(proxy.since(markRotate));
  figures.push({ figure: 'logins of one user: 20 of its orders created, then all 20 rotated together (counted at the proxy)', value: `${created} + ${rotated}`, goal: '1 per token lifetime (1 + 0)', met: created + rotated === 1 });
  process.stderr.write(`[bench] one user, 20 orders: ${created} logins while creating, ${rotated} while rotating together (${mix(proxy.since(markRotate), 20)})\n`);
  for (let k = 0; k < 20; k++) await ok('DELETE', `${path('keystoneapplicationcredentials', NS)}/solo${k}`);
  await quiet(run.op, proxy);
}
