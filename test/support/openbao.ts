/**
 * Starts a real OpenBao (`bao server -dev`, in-memory storage) on 127.0.0.1 with a free port and a generated root token,
 * and mounts a KV v2 engine at `openstack/`, where the spec's backing path
 * `openstack/keystone/<namespace>/<name>-<hash>-applicationcredential/<order uid>/service-accounts/application-credential` lives.
 * (Dev mode's own `secret/` KV v2 mount is left as it is; nothing here uses it.)
 *
 * Variables it exports: KAC_BAO_ADDR (http://127.0.0.1:<port>), KAC_BAO_TOKEN (root token), KAC_BAO_KV_MOUNT ('openstack'),
 * KAC_BAO (path to the bao binary, for `bao kv ...` with BAO_ADDR/BAO_TOKEN set by the caller).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveBinary } from './binaries';
import type { Started, Starter } from './starter';
import { freePort, progress, startServer, tail, waitUntil } from './proc';

export const KV_MOUNT = 'openstack';

/** A running `bao server -dev`. */
export interface BaoServer extends Started {
  readonly addr: string;
  /** The root token. */
  readonly token: string;
  /** The bao binary. */
  readonly bao: string;
}

/**
 * Starts `bao server -dev` in `workDir` and waits until it is unsealed; with `kvMount`, mounts a KV v2 engine there and
 * waits until it answers. A test that sets OpenBao up as a user would (docs/install/openbao.md) starts one without the mount.
 */
export async function startBao(workDir: string, options: { kvMount?: string } = {}): Promise<BaoServer> {
  mkdirSync(workDir, { recursive: true });
  const bao = resolveBinary('bao');
  progress(`openbao: bao from ${bao.source}: ${bao.path}`);
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const token = `kac-root-${randomBytes(12).toString('hex')}`;
  const log = join(workDir, 'bao.log');
  const server = startServer(
    'bao',
    bao.path,
    ['server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${token}`, '-dev-no-store-token', '-log-level=warn'],
    log,
    // HOME in the work dir: dev mode must not write a token helper file into the developer's home.
    { env: { ...process.env, HOME: workDir, BAO_ADDR: addr }, cwd: workDir },
  );
  const stop = async (): Promise<void> => {
    const peak = server.peakRssKiB();
    await server.stop();
    progress(`openbao stopped; peak RSS bao=${Math.round(peak / 1024)}MiB`);
  };
  try {
    await waitUntil(
      server,
      'unsealed and active',
      async () => (await fetch(`${addr}/v1/sys/health`, { signal: AbortSignal.timeout(5_000) })).status === 200,
      60_000,
    );
    const mount = options.kvMount;
    if (mount) {
      const res = await fetch(`${addr}/v1/sys/mounts/${mount}`, {
        method: 'POST',
        headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'kv', options: { version: '2' }, description: 'keystone-appcred tests' }),
      });
      if (!res.ok) throw new Error(`mounting kv-v2 at ${mount}/ failed: ${res.status} ${await res.text()}\n${tail(log)}`);
      // A freshly mounted KV v2 engine upgrades itself in the background; wait until its config answers.
      await waitUntil(
        server,
        'the kv-v2 mount is ready',
        async () => (await fetch(`${addr}/v1/${mount}/config`, { headers: { 'X-Vault-Token': token } })).status === 200,
        30_000,
      );
    }
    return {
      addr,
      token,
      bao: bao.path,
      env: { KAC_BAO_ADDR: addr, KAC_BAO_TOKEN: token, KAC_BAO_KV_MOUNT: mount ?? '', KAC_BAO: bao.path },
      logs: [log],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export const startOpenBao: Starter = async (workDir: string): Promise<Started> => startBao(workDir, { kvMount: KV_MOUNT });
