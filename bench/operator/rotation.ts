/**
 * 1. Rotation latency: from "due" (the PATCH raising `spec.credentialGeneration`, as `keystone-appcred rotate` does) to
 * the delivered Secret carrying the new credential, OpenBao backups on; against a bare Keystone create + a bare OpenBao
 * write + 1 s, measured in the same run (median of 5).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeRequest } from '../../test/support/kubectl';
import { waitReady } from '../../test/support/operator';
import { median, ms } from '../report';
import { NS, createAll, ok, path, untilReady } from './api';
import { launch } from './launch';
import { ensureUsers, order, passwordOf } from './orders';
import { quiet } from './process';
import type { Run } from './run';

/** Measures the rotation latency with an operator of its own (stopped at the end); one row. */
export async function rotation(run: Run): Promise<void> {
  const { env, figures, users, keystone } = run;
  const { proxy } = env;
  const op = (run.op = await launch(env, 'bench-rotation', true));
  await waitReady(op);
  await untilReady('keystoneprojects', 'bench/plane=yes', 1, 120_000, 500);
  await ensureUsers(1, users);
  const rot = 'rot';
  // No grace period: the superseded credential goes at once, so the next rotation may start (one at a time).
  await createAll([order(rot, 'u0', 'rotation', '0s')]);
  await untilReady('keystoneapplicationcredentials', 'bench/batch=rotation', 1, 120_000);
  const latencies: number[] = [];
  const bareRotation: number[] = [];
  const secretPath = `/api/v1/namespaces/${NS}/secrets/${rot}-credentials`;
  const deliveredId = async () => {
    const res = await kubeRequest('GET', secretPath);
    return res.status === 200 ? Buffer.from((JSON.parse(res.body) as { data: Record<string, string> }).data.application_credential_id ?? '', 'base64').toString() : '';
  };
  const password = await passwordOf('u0');
  for (let i = 0; i < 5; i++) {
    await quiet(op, proxy, 2_000);
    // The baseline first: one bare create (token at hand) and one bare OpenBao write of a document of the same size.
    const t = await fetch(`${keystone.authUrl}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'bench-u0', domain: { name: 'Default' }, password } } }, scope: { project: { name: 'bench-proj', domain: { name: 'Default' } } } } }) });
    const token = t.headers.get('x-subject-token') ?? '';
    const userId = ((await t.json()) as { token: { user: { id: string } } }).token.user.id;
    const t0 = performance.now();
    const c = await fetch(`${keystone.authUrl}/users/${userId}/application_credentials`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-token': token }, body: JSON.stringify({ application_credential: { name: `bare-rot-${i}`, secret: randomBytes(32).toString('base64url'), unrestricted: false } }) });
    const id = ((await c.json()) as { application_credential: { id: string } }).application_credential.id;
    const createMs = performance.now() - t0;
    const t1 = performance.now();
    await (await fetch(`${env.bao.addr}/v1/openstack/data/keystone/bench/bare-${i}`, { method: 'POST', headers: { 'X-Vault-Token': env.bao.token, 'content-type': 'application/json' }, body: JSON.stringify({ data: { 'clouds.yaml': 'x'.repeat(400), application_credential_id: id, application_credential_secret: randomBytes(32).toString('base64url') } }) })).text();
    bareRotation.push(createMs + (performance.now() - t1));
    await (await fetch(`${keystone.authUrl}/users/${userId}/application_credentials/${id}`, { method: 'DELETE', headers: { 'x-auth-token': token } })).text();

    const old = await deliveredId();
    const due = performance.now();
    await ok('PATCH', `${path('keystoneapplicationcredentials', NS)}/${rot}`, { spec: { credentialGeneration: i + 2 } });
    for (;;) {
      const now = await deliveredId();
      if (now && now !== old) break;
      if (performance.now() - due > 20_000) {
        const o = JSON.parse(await ok('GET', `${path('keystoneapplicationcredentials', NS)}/${rot}`)) as { status?: { credentialID?: string } };
        const sec = JSON.parse(await ok('GET', secretPath)) as { metadata: { resourceVersion: string; managedFields: unknown[] } };
        throw new Error(`the rotation did not reach the Secret in 20 s (credential ${old} → ${now}; status ${o.status?.credentialID}; secret rv ${sec.metadata.resourceVersion} ${JSON.stringify(sec.metadata.managedFields)})`);
      }
      await sleep(10);
    }
    latencies.push(performance.now() - due);
  }
  const rotationGoal = median(bareRotation) + 1000;
  figures.push({ figure: 'rotation latency, due → Secret carries the new generation (backups on)', value: ms(median(latencies)), baseline: `${ms(median(bareRotation))} (create + OpenBao write) + 1 s`, ratio: median(latencies) / rotationGoal, goal: `≤ ${ms(rotationGoal)}`, met: median(latencies) <= rotationGoal });
  process.stderr.write(`[bench] rotation latencies ${latencies.map((x) => x.toFixed(0)).join(', ')} ms\n`);
  await ok('DELETE', `${path('keystoneapplicationcredentials', NS)}/${rot}`);
  await sleep(3_000);
  await op.server.stop(10_000);
}
