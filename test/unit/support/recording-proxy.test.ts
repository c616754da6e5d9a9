/**
 * The recording proxy's count of requests in flight (bench/operator.ts reports it next to the Keystone rate limit),
 * against a real HTTP upstream that answers after a delay.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { describeInFlight, inFlightProfile, startRecordingProxy } from '../../support/recording-proxy';

describe('recording proxy: requests in flight', () => {
  let upstream: Server;
  let url = '';
  beforeAll(async () => {
    // A barrier: requests are answered in pairs, 60 ms after the second of a pair arrives, so the two lanes below are
    // both in flight at every round however the machine schedules them (a loaded machine once desynchronised lanes
    // that were only timed to overlap).
    let waiting: (() => void)[] = [];
    upstream = createServer((_req, res) => {
      waiting.push(() => res.end('{}'));
      if (waiting.length < 2) return;
      const pair = waiting;
      waiting = [];
      setTimeout(() => pair.forEach((answer) => answer()), 60);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v3`;
  });
  afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

  it('counts the peak and the share of the time at each count', async () => {
    const proxy = await startRecordingProxy(url);
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
