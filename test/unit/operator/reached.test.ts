/**
 * src/operator/credential/reached.ts: the dependencies a credential pass reached. A port wrapped by `noting` names its
 * dependency as unanswered for a failure that counts (an outage) and as answered for a reply or a refusal of the
 * order's own; only the methods named are watched, the others are the port's own, bound to it (a class's prototype
 * methods included), and a port's errors and replies pass through unchanged.
 */
import { API_WRITES, PassReach, noting, unansweredByApiServer, type Reached } from '../../../src/operator/credential/reached';
import { KubeApiError } from '../../../src/kube/errors';

class Port {
  calls: string[] = [];
  constructor(private readonly fail?: unknown) {}
  async getSecret(name: string): Promise<string> {
    this.calls.push(`get ${name}`);
    return name;
  }
  async writeStatus(status: string): Promise<string> {
    this.calls.push(`write ${status}`);
    if (this.fail !== undefined) throw this.fail;
    return 'ok';
  }
}

const reachedOf = (): Reached => ({ unanswered: new Set(), answered: new Set() });

describe('noting: the dependencies a pass reached', () => {
  it('a write that returned answered; a read the cache serves is the port’s own, not noted', async () => {
    const port = new Port();
    const reached = reachedOf();
    const noted = noting(port, reached, 'the API server', unansweredByApiServer, API_WRITES);
    expect(await noted.getSecret('a')).toBe('a');
    expect(reached.answered.size + reached.unanswered.size).toBe(0);
    expect(await noted.writeStatus('s')).toBe('ok');
    expect([...reached.answered]).toEqual(['the API server']);
    expect(port.calls).toEqual(['get a', 'write s']);
  });

  it('a 5xx did not answer; a 4xx refusal is the order’s own and answered; the error is thrown as it was', async () => {
    const outage = new KubeApiError(503, 'ServiceUnavailable', 'unavailable', 'PATCH /status');
    const reached = reachedOf();
    await expect(noting(new Port(outage), reached, 'the API server', unansweredByApiServer, API_WRITES).writeStatus('s')).rejects.toBe(outage);
    expect([...reached.unanswered]).toEqual(['the API server']);
    const refused = new KubeApiError(409, 'Conflict', 'conflict', 'PATCH /status');
    const other = reachedOf();
    await expect(noting(new Port(refused), other, 'the API server', unansweredByApiServer, API_WRITES).writeStatus('s')).rejects.toBe(refused);
    expect([...other.answered]).toEqual(['the API server']);
    expect(other.unanswered.size).toBe(0);
  });

  it('the wrappings of one port by passes at once (its methods bound once): each pass notes its own calls only, reads act on the port', async () => {
    const port = new Port();
    const [first, second] = [reachedOf(), reachedOf()];
    const a = noting(port, first, 'the API server', unansweredByApiServer, API_WRITES);
    const b = noting(port, second, 'the API server', unansweredByApiServer, API_WRITES);
    expect(a.getSecret).toBe(b.getSecret); // the port's own read, bound once
    expect(await b.writeStatus('s')).toBe('ok');
    expect([first.answered.size, second.answered.size]).toEqual([0, 1]);
    expect(await a.getSecret('x')).toBe('x');
    expect(port.calls).toEqual(['write s', 'get x']);
    const failing = new Port(new KubeApiError(503, 'ServiceUnavailable', 'unavailable', 'PATCH /status'));
    const [third, fourth] = [reachedOf(), reachedOf()];
    noting(failing, third, 'the API server', unansweredByApiServer, API_WRITES);
    await expect(noting(failing, fourth, 'the API server', unansweredByApiServer, API_WRITES).writeStatus('s')).rejects.toThrow('unavailable');
    expect([third.unanswered.size, fourth.unanswered.size]).toEqual([0, 1]);
  });

  it('without a set of methods every method is watched, an object literal’s too', async () => {
    const reached = reachedOf();
    const backup = noting({ read: async () => 'id', remove: async () => Promise.reject(new Error('down')) }, reached, 'OpenBao', () => true);
    expect(await backup.read()).toBe('id');
    await expect(backup.remove()).rejects.toThrow('down');
    expect([...reached.answered]).toEqual(['OpenBao']);
    expect([...reached.unanswered]).toEqual(['OpenBao']);
  });

  it("a pass's reach: Keystone answered only where the port says so, a dependency that failed one call did not answer", async () => {
    const reach = new PassReach();
    let answer: () => void = () => undefined;
    const keystone = reach.keystone('https://keystone.example/v3/', (onAnswer) => {
      answer = onAnswer;
      return { list: async () => [], create: async () => Promise.reject(Object.assign(new Error('503'), { retryable: true })), delete: async () => undefined };
    });
    await keystone.list();
    expect(reach.answeredAll()).toEqual([]); // served by the known credentials: Keystone was not reached
    answer();
    expect(reach.answeredAll()).toEqual(['Keystone https://keystone.example/v3']);
    await expect(keystone.create({ name: 'n', secret: 's', mark: {} })).rejects.toThrow('503');
    expect([...reach.unanswered]).toEqual(['Keystone https://keystone.example/v3']);
    expect(reach.answeredAll()).toEqual([]);
  });
});
