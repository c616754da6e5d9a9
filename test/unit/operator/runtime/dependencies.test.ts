/**
 * Waiting on a dependency: one probe per dependency (a waiter's pass, in turn, 1 s doubling to 15 s), every waiter woken
 * the moment one of them succeeds, the waiter's own retry at the backoff's cap; and in the controller: an error that
 * names a dependency waits on it, one that does not is backed off as before.
 */
import { DependencyWaits, PROBE_BACKOFF, answeredOf, dependenciesOf } from '../../../../src/operator/runtime/dependencies';
import { KubeApiError } from '../../../../src/kube/errors';
import { Kinds } from '../../../../src/kube/kinds';
import { Controller, type Result } from '../../../../src/operator/runtime/controller';
import { jsonLogger } from '../../../../src/operator/runtime/log';
import { OperatorMetrics } from '../../../../src/operator/runtime/metrics';

const noJitter = { probe: { random: () => 0 } };

describe('DependencyWaits', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());
  /** A waiter of the credential controller. */
  const w = (key: string) => ({ controller: 'KeystoneApplicationCredential', key });

  it('probes one waiter at a time, the one probed longest ago, after 1 s, 2 s, 4 s, 8 s, then every 15 s', async () => {
    const waits = new DependencyWaits(noJitter);
    const probed: [number, string][] = [];
    const t0 = Date.now();
    for (const key of ['a', 'b', 'c']) waits.wait(w(key), ['OpenBao'], () => probed.push([Date.now(), key]));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(probed.map(([at, key]) => [(at - t0) / 1000, key])).toEqual([
      [1, 'a'],
      [3, 'b'],
      [7, 'c'],
      [15, 'a'],
      [30, 'b'],
      [45, 'c'],
      [60, 'a'],
    ]);
    expect(waits.down).toEqual(new Map([['OpenBao', 3]]));
    waits.stop();
  });

  it('a probe that fails again keeps the schedule (the dependency does not start over at 1 s)', async () => {
    const waits = new DependencyWaits(noJitter);
    const probed: number[] = [];
    const t0 = Date.now();
    const enqueue = () => {
      probed.push((Date.now() - t0) / 1000);
      waits.wait(w('a'), ['OpenBao'], enqueue); // the probe's pass failed on it again
    };
    waits.wait(w('a'), ['OpenBao'], enqueue);
    await jest.advanceTimersByTimeAsync(45_000);
    expect(probed).toEqual([1, 3, 7, 15, 30, 45]);
    waits.stop();
  });

  it('a dependency answered: every waiter of it is queued once, and it is probed no more', async () => {
    const waits = new DependencyWaits(noJitter);
    const queued: string[] = [];
    const wait = (key: string, dependencies: string[]) => waits.wait(w(key), dependencies, () => queued.push(key));
    wait('a', ['OpenBao']);
    wait('b', ['OpenBao', 'Keystone http://k/v3']);
    wait('c', ['Keystone http://k/v3']);
    wait('d', ['Keystone http://other/v3']);
    waits.answered(['OpenBao']);
    // b waited on OpenBao too: woken; c waits on Keystone only, which did not answer
    expect(queued).toEqual(['a', 'b']);
    expect(['a', 'b', 'c', 'd'].map((k) => waits.waiting(w(k)))).toEqual([false, false, true, true]);
    waits.answered(['Keystone http://k/v3']);
    expect(queued).toEqual(['a', 'b', 'c']);
    expect(waits.down).toEqual(new Map([['Keystone http://other/v3', 1]]));
    queued.length = 0;
    await jest.advanceTimersByTimeAsync(PROBE_BACKOFF.baseMs);
    expect(queued).toEqual(['d']);
    waits.stop();
  });

  it('a waiter that leaves (its pass succeeded or failed for a reason of its own) wakes nobody; the last one takes the probe with it', async () => {
    const waits = new DependencyWaits(noJitter);
    const queued: string[] = [];
    waits.wait(w('a'), ['OpenBao'], () => queued.push('a'));
    waits.release(w('a'));
    await jest.advanceTimersByTimeAsync(60_000);
    expect(queued).toEqual([]);
    expect(waits.down.size).toBe(0);
    // an answer for a dependency nobody waits on wakes nothing
    waits.answered(['OpenBao']);
    expect(queued).toEqual([]);
  });

  it('a waiter is one controller\'s object: the same key of another controller is another waiter, on any cluster its key names', () => {
    const waits = new DependencyWaits(noJitter);
    waits.wait(w('n/a'), ['OpenBao'], () => undefined);
    waits.wait(w('edge-1:n/a'), ['OpenBao'], () => undefined); // the order n/a of the target cluster edge-1
    waits.release({ controller: 'KeystoneUser', key: 'n/a' });
    expect([waits.waiting(w('n/a')), waits.waiting(w('edge-1:n/a')), waits.waiting({ controller: 'consumer-handoff', key: 'n/a' })]).toEqual([true, true, false]);
    expect(waits.down).toEqual(new Map([['OpenBao', 2]]));
    waits.stop();
  });

  it('reads the dependencies off an error, and none off any other', () => {
    expect(dependenciesOf(Object.assign(new Error('x'), { waitsOn: ['OpenBao', 7] }))).toEqual(['OpenBao']);
    expect(answeredOf(Object.assign(new Error('x'), { waitsOn: [], answered: ['OpenBao', null] }))).toEqual(['OpenBao']);
    expect(dependenciesOf(new Error('x'))).toEqual([]);
    expect(answeredOf(new Error('x'))).toEqual([]);
    expect(dependenciesOf(undefined)).toEqual([]);
  });
});

describe('Controller with dependency waits', () => {
  const setup = (reconcile: (key: string) => Promise<Result | void>) => {
    const lines: Record<string, unknown>[] = [];
    const waits = new DependencyWaits({ probe: { baseMs: 20, maxMs: 40, random: () => 0 } });
    const controller = new Controller(
      { kind: Kinds.ControlPlane, reconcile: (r) => reconcile(r.key), backoff: { baseMs: 10, maxMs: 60_000, random: () => 0 } },
      { metrics: new OperatorMetrics({ defaultMetrics: false }), logger: jsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }), keys: () => [], waits },
    );
    return { controller, lines, waits };
  };
  const until = async (check: () => boolean, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('orders failing on a dependency wait for it (their own retry at the cap); one probe succeeding wakes them all at once', async () => {
    let down = true;
    const passes: string[] = [];
    const { controller, lines, waits } = setup(async (key) => {
      passes.push(key);
      if (down) throw Object.assign(new Error('OpenBao GET /v1/x: 403: permission denied'), { waitsOn: ['OpenBao'] });
      return { answered: ['OpenBao'] }; // the pass read and wrote the backup
    });
    controller.start();
    for (const key of ['n/a', 'n/b', 'n/c']) controller.enqueue(key);
    await until(() => passes.length === 3);
    const failed = lines.filter((l) => l.result === 'error');
    expect(failed.map((l) => [l.waitsOn, l.retryInMs])).toEqual([
      ['OpenBao', 60_000],
      ['OpenBao', 60_000],
      ['OpenBao', 60_000],
    ]);
    // the probes: one order at a time, not three backoffs
    await until(() => passes.length >= 6);
    expect(passes.slice(3, 6)).toEqual(['n/a', 'n/b', 'n/c']);
    down = false;
    const before = passes.length;
    await until(() => ['n/a', 'n/b', 'n/c'].every((key) => !waits.waiting({ controller: 'ControlPlane', key })));
    await until(() => passes.length >= before + 3);
    expect(new Set(passes.slice(before))).toEqual(new Set(['n/a', 'n/b', 'n/c']));
    await controller.stop(1_000);
  });

  it('after a dependency wait, the order\'s own failure is retried after the base delay, not what remains of the cap (issue 46, finding 5)', async () => {
    let passes = 0;
    const { controller, lines } = setup(async () => {
      passes++;
      if (passes === 1) throw Object.assign(new Error('OpenBao GET /v1/x: 503'), { waitsOn: ['OpenBao'] });
      throw new Error('the order is broken'); // the probe reached OpenBao; the order fails for a reason of its own
    });
    controller.start();
    controller.enqueue('n/a');
    await until(() => lines.filter((l) => l.result === 'error').length >= 2);
    expect(lines.filter((l) => l.result === 'error').slice(0, 2).map((l) => [l.waitsOn, l.retryInMs])).toEqual([
      ['OpenBao', 60_000],
      [undefined, 10],
    ]);
    await controller.stop(1_000);
  });

  it('a conflict that a reconciler\'s error wraps (its cause) is still a conflict', async () => {
    let passes = 0;
    const { controller, lines } = setup(async () => {
      if (passes++ === 0) throw new Error('PATCH …/status: 409 Conflict', { cause: new KubeApiError(409, 'Conflict', 'the object has been modified', 'PATCH /status') });
    });
    controller.start();
    controller.enqueue('n/a');
    await until(() => lines.filter((l) => l.msg === 'reconcile').length >= 2);
    expect(lines.filter((l) => l.msg === 'reconcile').map((l) => l.result)).toEqual(['conflict', 'success']);
    await controller.stop(1_000);
  });

  it('a failure that names no dependency is backed off per key, as before', async () => {
    const passes: number[] = [];
    const { controller, lines, waits } = setup(async () => {
      passes.push(Date.now());
      throw new Error('the order is broken');
    });
    controller.start();
    controller.enqueue('n/a');
    await until(() => passes.length >= 3);
    expect(lines.filter((l) => l.result === 'error').slice(0, 3).map((l) => l.retryInMs)).toEqual([10, 20, 40]);
    expect(lines.some((l) => l.waitsOn !== undefined)).toBe(false);
    expect(waits.down.size).toBe(0);
    await controller.stop(1_000);
  });
});

describe('dependency waits keyed by controller, answered only by a pass that reached the dependency (issue 46, finding 2)', () => {
  type Outcome = Result | void;
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const logger = jsonLogger({ write: () => undefined });
  // The probe far away: what wakes a waiter here is an answer, never the probe.
  const shared = () => new DependencyWaits({ probe: { baseMs: 600_000, maxMs: 600_000, random: () => 0 } });
  const controllerOf = (waits: DependencyWaits, kind: (typeof Kinds)[keyof typeof Kinds], reconcile: (key: string) => Promise<Outcome>) =>
    new Controller({ kind, reconcile: (r) => reconcile(r.key), backoff: { baseMs: 10, maxMs: 60_000, random: () => 0 } }, { metrics, logger, keys: () => [], waits });
  const until = async (check: () => boolean, ms = 5_000) => {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const settle = () => new Promise((r) => setTimeout(r, 50));
  /** Two orders of the credential controller waiting on OpenBao, and another controller on the same keys. */
  const waiting = async (other: (key: string) => Promise<Outcome>, own: (key: string, pass: number) => Promise<Outcome> = async () => undefined) => {
    const waits = shared();
    const passes: string[] = [];
    let down = true;
    const credentials = controllerOf(waits, Kinds.KeystoneApplicationCredential, async (key) => {
      passes.push(key);
      if (down) throw Object.assign(new Error('OpenBao GET /v1/x: 503'), { waitsOn: ['OpenBao'] });
      return own(key, passes.length);
    });
    const handoff = controllerOf(waits, Kinds.KeystoneUser, other);
    credentials.start();
    handoff.start();
    credentials.enqueue('n/a');
    credentials.enqueue('n/b');
    await until(() => passes.length === 2);
    await settle();
    expect(waits.down).toEqual(new Map([['OpenBao', 2]]));
    const stop = async () => {
      await credentials.stop(1_000);
      await handoff.stop(1_000);
      waits.stop();
    };
    return { waits, passes, credentials, handoff, stop, up: () => (down = false) };
  };

  it("another controller's pass that succeeds on the same key answers nothing: the waiters stay, nobody is woken", async () => {
    const { waits, passes, handoff, stop } = await waiting(async () => undefined);
    handoff.enqueue('n/a');
    await settle();
    expect(passes).toEqual(['n/a', 'n/b']);
    expect(waits.down).toEqual(new Map([['OpenBao', 2]]));
    await stop();
  });

  it("another controller's pass that fails on the same key for a reason of its own does not drop the order's wait", async () => {
    const { waits, handoff, stop } = await waiting(async () => {
      throw new Error('the user is broken');
    });
    handoff.enqueue('n/a');
    await settle();
    expect(waits.down).toEqual(new Map([['OpenBao', 2]]));
    await stop();
  });

  it('a pass that succeeds without reaching the dependency (gated, frozen, skipped) leaves the line and wakes nobody', async () => {
    const { waits, passes, credentials, up, stop } = await waiting(async () => undefined);
    up();
    credentials.enqueue('n/a'); // its pass now succeeds without OpenBao: answered nothing
    await until(() => passes.length >= 3);
    await settle();
    expect(passes).toEqual(['n/a', 'n/b', 'n/a']);
    expect(waits.down).toEqual(new Map([['OpenBao', 1]]));
    await stop();
  });

  it('a pass that reached the dependency and was answered wakes every waiter of it, whatever else it failed on', async () => {
    const { waits, passes, credentials, up, stop } = await waiting(async () => undefined, async (key) => {
      if (key === 'n/a') throw Object.assign(new Error('Keystone GET …: 401'), { waitsOn: [], answered: ['OpenBao'] });
      return { answered: ['OpenBao'] };
    });
    up();
    credentials.enqueue('n/a');
    await until(() => passes.length === 4);
    expect(passes).toEqual(['n/a', 'n/b', 'n/a', 'n/b']);
    await settle();
    expect(waits.down.size).toBe(0);
    await stop();
  });
});
