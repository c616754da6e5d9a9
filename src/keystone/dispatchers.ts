/**
 * Connection pools for Keystones behind a private CA, one per CA bundle and process.
 *
 * A client per pass is the natural shape of a reconciler (the operator makes one per order and pass, with the order's
 * user). With a pool per client, each pass opened a new TLS connection and parsed the bundle into a new OpenSSL
 * context: CPU per pass, and native memory the garbage collector does not see until it happens to collect the client.
 * Sharing the pool of a bundle keeps connections alive across passes and parses the bundle once. Trust stays scoped to
 * the bundle: the pool is keyed by the bundle's content, and a connection only ever trusts that bundle.
 *
 * Each client leases the pool and releases it on close. When the last lease is released the pool lingers a while,
 * for the next pass, and then closes, so a short-lived CLI or the Pulumi provider leaves no socket behind.
 *
 * Concurrent passes (several workers per controller) share a pool: the lease count is kept without an await between
 * reading and writing it, and the linger timer checks the count again when it fires, so a pass that leases the pool
 * while another releases it keeps it open. undici's Agent opens as many connections per origin as requests are in
 * flight; how many that is, is the per-Keystone limit's business, not the pool's.
 */
import { createHash } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { Agent } from 'undici';

/** How long an unleased pool stays open for the next client of the same bundle. */
const LINGER_MS = 30_000;

interface Pool {
  readonly agent: Agent;
  leases: number;
  closing?: NodeJS.Timeout;
}

const pools = new Map<string, Pool>();

/** A lease on the shared pool of a CA bundle: `agent` to send with, `release` once (later calls do nothing). */
export interface PoolLease {
  readonly agent: Agent;
  release(): void;
}

/**
 * Leases the process's pool of connections that trust exactly `caBundle` (PEM). `lingerMs`: how long the pool stays
 * open after its last lease is released. @default 30000
 */
export function leasePool(caBundle: string, lingerMs = LINGER_MS): PoolLease {
  const key = createHash('sha256').update(caBundle).digest('hex');
  let pool = pools.get(key);
  if (!pool) {
    // Loaded only here: undici is about half of the Pulumi provider's start-up, and most connections need no CA.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Agent: UndiciAgent } = require('undici') as typeof import('undici');
    pool = { agent: new UndiciAgent({ connect: { secureContext: createSecureContext({ ca: caBundle }) } }), leases: 0 };
    pools.set(key, pool);
  }
  const leased = pool;
  clearTimeout(leased.closing);
  leased.closing = undefined;
  leased.leases++;
  let released = false;
  return {
    agent: leased.agent,
    release: () => {
      if (released) return;
      released = true;
      if (--leased.leases > 0) return;
      leased.closing = setTimeout(() => {
        if (leased.leases > 0 || pools.get(key) !== leased) return;
        pools.delete(key);
        void leased.agent.close().catch(() => undefined);
      }, lingerMs);
      leased.closing.unref();
    },
  };
}

/** Pools open now (leased or lingering): for tests and metrics. */
export function openPools(): number {
  return pools.size;
}
