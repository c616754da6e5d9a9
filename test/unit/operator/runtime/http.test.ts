import { serve } from '../../../../src/operator/runtime/http';

describe('health and metrics endpoints', () => {
  it('answer /healthz, /readyz (503 with the kinds still syncing, then 200) and /metrics on their own ports', async () => {
    let unsynced = ['ControlPlane', 'Secret'];
    const serving = await serve(
      { unsynced: () => unsynced, metrics: async () => ({ contentType: 'text/plain; version=0.0.4', body: 'keystone_appcred_leader 1\n' }) },
      { host: '127.0.0.1', healthPort: 0, metricsPort: 0 },
    );
    try {
      const health = `http://127.0.0.1:${serving.healthPort}`;
      const metrics = `http://127.0.0.1:${serving.metricsPort}`;
      expect(serving.healthPort).not.toBe(serving.metricsPort);
      expect((await fetch(`${health}/healthz`)).status).toBe(200);
      const notReady = await fetch(`${health}/readyz`);
      expect([notReady.status, await notReady.text()]).toEqual([503, 'caches not synced: ControlPlane, Secret\n']);
      unsynced = [];
      expect((await fetch(`${health}/readyz`)).status).toBe(200);
      expect((await fetch(`${health}/metrics`)).status).toBe(404);
      const m = await fetch(`${metrics}/metrics`);
      expect([m.status, m.headers.get('content-type'), await m.text()]).toEqual([200, 'text/plain; version=0.0.4', 'keystone_appcred_leader 1\n']);
      expect((await fetch(`${metrics}/healthz`)).status).toBe(404);
    } finally {
      await serving.close();
    }
  });

  it('serves everything on one server when both ports are the same', async () => {
    const probe = await serve({ unsynced: () => [], metrics: async () => ({ contentType: 'text/plain', body: '' }) }, { host: '127.0.0.1', healthPort: 0, metricsPort: 0 });
    const port = probe.healthPort;
    await probe.close();
    const serving = await serve({ unsynced: () => [], metrics: async () => ({ contentType: 'text/plain', body: 'm\n' }) }, { host: '127.0.0.1', healthPort: port, metricsPort: port });
    try {
      expect(serving.metricsPort).toBe(port);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toBe('m\n');
    } finally {
      await serving.close();
    }
  });

  it('writes a metrics body given in pieces as it comes, past the socket\'s buffer, and ends a response short when a piece fails', async () => {
    // 64 pieces of 64 KiB: 4 MiB, more than a socket takes without waiting for the client to read.
    const piece = `${'x'.repeat(65_535)}\n`;
    let made = 0;
    let fail = false;
    async function* pieces(): AsyncGenerator<string> {
      for (let i = 0; i < 64; i++) {
        if (fail && i === 2) throw new Error('a family failed');
        made++;
        yield piece;
      }
    }
    const serving = await serve({ unsynced: () => [], metrics: async () => ({ contentType: 'text/plain', body: pieces() }) }, { host: '127.0.0.1', healthPort: 0, metricsPort: 0 });
    try {
      const body = await (await fetch(`http://127.0.0.1:${serving.metricsPort}/metrics`)).text();
      expect([body.length, made]).toEqual([64 * 65_536, 64]);
      fail = true;
      const short = await fetch(`http://127.0.0.1:${serving.metricsPort}/metrics`);
      expect(short.status).toBe(200);
      await expect(short.text()).rejects.toThrow();
    } finally {
      await serving.close();
    }
  });
});

