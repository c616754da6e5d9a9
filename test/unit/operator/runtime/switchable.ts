/** A transport over a fake API server that can be taken down: requests and new watches then fail as a refused connection. */
import type { HttpRequest, Query, Transport, WatchEvent } from '../../../../src/kube/transport';
import type { FakeApiServer } from '../../kube/fake-api-server';

export class Switchable implements Transport {
  down = false;

  constructor(readonly inner: FakeApiServer) {}

  get server(): string {
    return this.inner.server;
  }

  request(request: HttpRequest) {
    if (this.down) return Promise.reject(Object.assign(new Error(`connect ECONNREFUSED ${this.inner.server}`), { code: 'ECONNREFUSED' }));
    return this.inner.request(request);
  }

  watch(path: string, query: Query, onEvent: (e: WatchEvent) => void, onDone: (error?: Error) => void) {
    if (this.down) return Promise.reject(new Error('connect ECONNREFUSED'));
    return this.inner.watch(path, query, onEvent, onDone);
  }

  /** Takes it down and ends the open watches, as a stopped API server does. */
  cut(): void {
    this.down = true;
    this.inner.closeWatches(new Error('connection reset'));
  }
}
