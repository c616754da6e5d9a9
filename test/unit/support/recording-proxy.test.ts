/**
 * The recording proxy's count of requests in flight (bench/operator.ts reports it next to the Keystone rate limit),
 * against a real HTTP upstream that answers after a delay; and its outages (`down`, `fault`) as a client meets them.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { describeInFlight, inFlightProfile, startRecordingProxy } from '../../support/recording-proxy';

/** A real HTTP upstream on 127.0.0.1 for the describe block it is called in; `url()` is its `/v3` base. */
function upstreamServing(listener: RequestListener): { url: () => string } {
  const server = createServer(listener);
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  return { url: () => url };
}

describe('recording proxy: requests in flight', () => {
  // A barrier: requests are answered in pairs, 60 ms after the second of a pair arrives, so the two lanes below are
  // both in flight at every round however the machine schedules them (a loaded machine once desynchronised lanes
  // that were only timed to overlap).
  let waiting: (() => void)[] = [];
  const upstream = upstreamServing((_req, res) => {
    waiting.push(() => res.end('{}'));
    if (waiting.length < 2) return;
    const pair = waiting;
    waiting = [];
    setTimeout(() => pair.forEach((answer) => answer()), 60);
  });

  it('counts the peak and the share of the time at each count', async () => {
    const proxy = await startRecordingProxy(upstream.url());
    try {
      const from = performance.now();
      // Two lanes of three requests each: two in flight at every round, never three.
      await Promise.all([0, 1].map(async () => {
        for (let i = 0; i < 3; i++) await (await fetch(`${proxy.url}/x`)).text();
      }));
      const to = performance.now();
      const flight = inFlightProfile(proxy.spans, from, to);
      expect(proxy.spans).toHaveLength(6);
      expect(flight.peak).toBe(2);
      expect(flight.share.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
      expect(flight.share[2]).toBeGreaterThan(0);
      expect(describeInFlight(flight)).toMatch(/^peak 2; share of the time at each count: .*2: \d+%/);
    } finally {
      await proxy.close();
    }
  });

  it('computes the profile of given spans exactly', () => {
    const spans = [{ start: 0, end: 10 }, { start: 5, end: 15 }, { start: 15, end: 20 }];
    expect(inFlightProfile(spans, 0, 20)).toEqual({ peak: 2, share: [0, 0.75, 0.25] });
    expect(inFlightProfile(spans, 10, 40)).toEqual({ peak: 1, share: [20 / 30, 10 / 30] });
  });
});

describe('recording proxy: outages', () => {
  const seen: string[] = [];
  const upstream = upstreamServing((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.end('{}'));
  });

  it('down: every request reset and recorded, nothing reaches the upstream; up again: forwarded', async () => {
    const proxy = await startRecordingProxy(upstream.url());
    try {
      proxy.down = true;
      const login = JSON.stringify({ auth: { identity: { password: { user: { id: 'u1', password: 'never-recorded' } } } } });
      await expect(fetch(`${proxy.url}/auth/tokens`, { method: 'POST', body: login })).rejects.toThrow();
      await expect(fetch(`${proxy.url}/users`)).rejects.toThrow();
      expect(seen).toEqual([]);
      expect(proxy.calls.map((c) => [c.method, c.path, c.reset, c.login])).toEqual([
        ['POST', '/v3/auth/tokens', true, 'u1'],
        ['GET', '/v3/users', true, undefined],
      ]);
      proxy.down = false;
      expect((await fetch(`${proxy.url}/users`)).status).toBe(200);
      expect(seen).toEqual(['GET /v3/users']);
      expect(JSON.stringify(proxy.calls)).not.toContain('never-recorded');
    } finally {
      await proxy.close();
    }
  });

  it('fault: a login answered with the status is still noted as whose', async () => {
    const proxy = await startRecordingProxy(upstream.url());
    try {
      proxy.fault = () => 503;
      const res = await fetch(`${proxy.url}/auth/tokens`, { method: 'POST', body: JSON.stringify({ auth: { identity: { password: { user: { name: 'svc' } } } } }) });
      expect(res.status).toBe(503);
      expect(proxy.calls.map((c) => [c.status, c.login])).toEqual([[503, 'svc']]);
    } finally {
      await proxy.close();
    }
  });
});
