import { KubeApiError } from '../../../../src/kube/errors';
import { Kinds } from '../../../../src/kube/kinds';
import { Controller, type Reconcile } from '../../../../src/operator/runtime/controller';
import { jsonLogger } from '../../../../src/operator/runtime/log';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';
import { until } from './until';

function setup(reconcile: Reconcile, options: { keys?: string[]; concurrency?: number } = {}) {
  const lines: Record<string, unknown>[] = [];
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const controller = new Controller(
    { kind: Kinds.ControlPlane, reconcile, concurrency: options.concurrency, backoff: { baseMs: 10, maxMs: 40, random: () => 0 } },
    { metrics, logger: jsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }), keys: () => options.keys ?? [] },
  );
  const reconciles = () => lines.filter((l) => l.msg === 'reconcile');
  return { controller, metrics, lines, reconciles };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('Controller', () => {
  it('queues every cached object on start and reconciles each; keys queued before start are ignored', async () => {
    const seen: string[] = [];
    const { controller, reconciles } = setup(async (r) => void seen.push(`${r.namespace}/${r.name}`), { keys: ['openstack/a', 'openstack/b'] });
    controller.enqueue('openstack/early');
    controller.start();
    await until(() => seen.length === 2);
    expect(seen).toEqual(['openstack/a', 'openstack/b']);
    expect(reconciles().map((l) => [l.key, l.result, l.controller])).toEqual([['openstack/a', 'success', 'ControlPlane'], ['openstack/b', 'success', 'ControlPlane']]);
    await controller.stop(1000);
  });

  it('never runs one key twice at once, runs it once more when it changed meanwhile, and runs different keys in parallel', async () => {
    let inFlight = 0;
    let maxSameKey = 0;
    const perKey = new Map<string, number>();
    const calls: string[] = [];
    const { controller } = setup(async (r) => {
      calls.push(r.key);
      perKey.set(r.key, (perKey.get(r.key) ?? 0) + 1);
      maxSameKey = Math.max(maxSameKey, perKey.get(r.key) as number);
      inFlight++;
      await sleep(30);
      inFlight--;
      perKey.set(r.key, (perKey.get(r.key) ?? 1) - 1);
    }, { concurrency: 3 });
    controller.start();
    controller.enqueue('n/a');
    controller.enqueue('n/b');
    await sleep(5);
    expect(inFlight).toBe(2);
    controller.enqueue('n/a');
    controller.enqueue('n/a');
    await until(() => calls.length === 3 && inFlight === 0);
    expect(calls).toEqual(['n/a', 'n/b', 'n/a']);
    expect(maxSameKey).toBe(1);
    await controller.stop(1000);
  });

  it('turns the event loop between passes: a timer due during a long queue of passes without I/O fires among them, not after the last', async () => {
    const total = 3000;
    let passes = 0;
    // Each pass works ~0.05 ms and resolves without I/O, as a converged order's pass from the caches does.
    const { controller } = setup(async () => {
      const until = performance.now() + 0.05;
      while (performance.now() < until);
      passes++;
    }, { keys: Array.from({ length: total }, (_, i) => `n/o${i}`), concurrency: 8 });
    let passesWhenTimerFired = -1;
    const fired = new Promise<void>((resolve) => setTimeout(() => { passesWhenTimerFired = passes; resolve(); }, 1));
    controller.start();
    await fired;
    await until(() => passes === total, 10_000);
    // Without a turn between passes the whole queue ran as one chain of microtasks and the timer saw all 3,000.
    expect(passesWhenTimerFired).toBeLessThan(total);
    await controller.stop(1000);
  });

  it('requeues after the requested time', async () => {
    const times: number[] = [];
    const { controller, reconciles } = setup(async () => {
      times.push(Date.now());
      return times.length === 1 ? { requeueAfter: 60, reason: 'Waiting' } : {};
    }, { keys: ['n/a'] });
    controller.start();
    await until(() => times.length === 2);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(55);
    expect(reconciles()[0]).toMatchObject({ result: 'requeue', requeueAfterMs: 60, reason: 'Waiting' });
    await controller.stop(1000);
  });

  it('retries failures with a growing backoff, logs conflicts as such, forgets on success, and counts everything', async () => {
    let n = 0;
    const { controller, reconciles, metrics } = setup(async () => {
      n++;
      if (n === 1) throw new Error('keystone unreachable');
      if (n === 2) throw new KubeApiError(409, 'Conflict', 'the object has been modified', 'PATCH x');
    }, { keys: ['n/a'] });
    controller.start();
    await until(() => n === 3 && reconciles().length === 3);
    expect(reconciles().map((l) => [l.result, l.retries, l.retryInMs, l.level])).toEqual([
      ['error', 1, 10, 'warn'],
      ['conflict', 2, 20, 'info'],
      ['success', undefined, undefined, 'info'],
    ]);
    expect(reconciles()[0].error).toBe('keystone unreachable');
    expect(controller.queue.retries('n/a')).toBe(0);
    const text = await metrics.text();
    expect(text).toContain('keystone_appcred_reconcile_total{kind="ControlPlane",result="error"} 1');
    expect(text).toContain('keystone_appcred_reconcile_total{kind="ControlPlane",result="conflict"} 1');
    expect(text).toContain('keystone_appcred_reconcile_total{kind="ControlPlane",result="success"} 1');
    expect(text).toContain('keystone_appcred_reconcile_errors_total{kind="ControlPlane"} 2');
    expect(text).toContain('keystone_appcred_reconcile_duration_seconds_count{kind="ControlPlane"} 3');
    await controller.stop(1000);
  });

  it('on stop lets the reconcile in flight finish within the deadline and starts no other', async () => {
    const done: string[] = [];
    const { controller } = setup(async (r) => {
      await sleep(50);
      done.push(r.key);
    }, { keys: ['n/a', 'n/b'] });
    controller.start();
    await sleep(5);
    expect(await controller.stop(1000)).toBe(true);
    expect(done).toEqual(['n/a']);
  });

  it('reports a deadline that passed with work in flight', async () => {
    const { controller } = setup(() => sleep(300), { keys: ['n/a'] });
    controller.start();
    await sleep(5);
    expect(await controller.stop(20)).toBe(false);
  });
});
