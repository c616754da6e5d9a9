/**
 * One call sequence on an API server, through the project's own client (src/kube/api.ts), as a transcript (see
 * ./keystone.ts), on the semantics the operator's runtime relies on: the real API server and the fake
 * (test/unit/kube/fake-api-server.ts) must give equal ones (test/e2e/fakes-conformance.test.ts). It works on
 * KeystoneApplicationCredentials (the project's CRD: a status subresource, generations) in a namespace of its own, and
 * deletes them as a user does (`kubectl delete`: no body).
 *
 * Covered: a get of nothing; a list and its resourceVersion; a create; a replace and a merge patch from a stale
 * resourceVersion refused (409), a fresh one accepted; generation moves with the spec only; the status subresource
 * (the main resource does not write it); a watch from a list's resourceVersion sees every change in order, gets a
 * bookmark before its timeout and ends cleanly then; a watch from a compacted resourceVersion gets 410; finalizers hold
 * a delete until the last is removed; server-side apply's field ownership (a field another manager owns refused
 * without force, taken with it; an apply drops the fields its manager no longer applies, not another's).
 */
import { KubeApi } from '../../../src/kube/api';
import { KubeApiError } from '../../../src/kube/errors';
import { Kinds } from '../../../src/kube/kinds';
import type { KubeObject } from '../../../src/kube/object';
import type { Transport, WatchEvent } from '../../../src/kube/transport';
import { transcript, type Transcript } from './transcript';

export interface ApiServerSubject {
  readonly transport: Transport;
  /** A namespace unique to this run. */
  readonly namespace: string;
  /** Lets every resourceVersion before now expire (the fake compacts its history; etcd and the watch cache have). */
  readonly compact?: () => void;
}

type Project = KubeObject & { spec?: unknown; status?: unknown };

export async function apiServerTranscript(subject: ApiServerSubject): Promise<Transcript> {
  const { out, step } = transcript((error) => (error instanceof KubeApiError ? { error: error.status, reason: error.reason } : undefined));
  const ns = subject.namespace;
  const api = new KubeApi(subject.transport, 'kac-conformance');
  const other = new KubeApi(subject.transport, 'kac-conformance-other');
  const kind = Kinds.KeystoneApplicationCredential;
  const project = (name: string, extra: Partial<Project> = {}): Project => ({
    apiVersion: 'c5c3.io/v1alpha1',
    kind: 'KeystoneApplicationCredential',
    metadata: { name, namespace: ns },
    spec: { controlPlaneRef: { name: 'cp', namespace: ns }, userRef: { name: 'svc' }, projectRef: { name: 'proj' }, credentialGeneration: 1, rotation: { interval: '720h', gracePeriod: '24h' } },
    ...extra,
  });
  /** `kubectl delete`: a DELETE without options (true when it existed). */
  const remove = async (name: string) => {
    const res = await subject.transport.request({ method: 'DELETE', path: api.path(kind, ns, name) });
    return res.status === 404 ? false : res.status < 300 ? true : { error: res.status };
  };
  const seen = (o: Project | undefined) =>
    o && { generation: o.metadata.generation, finalizers: o.metadata.finalizers ?? [], deleting: o.metadata.deletionTimestamp !== undefined, labels: o.metadata.labels ?? {}, status: o.status ?? {} };

  await api.create(Kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as KubeObject).catch(() => undefined);
  await step('get nothing', () => api.get(kind, ns, 'p1'));
  const listed = await api.list(kind, { namespace: ns });
  out.push(['list', { items: listed.items.length, resourceVersion: typeof listed.resourceVersion }]);
  const created = (await api.create(kind, project('p1', { metadata: { name: 'p1', namespace: ns, finalizers: ['kac.test/hold'] } }))) as Project;
  out.push(['create', seen(created)]);
  await step('create again', () => api.create(kind, project('p1')));
  const relabelled = (await api.patch(kind, ns, 'p1', { metadata: { labels: { step: 'one' } } }, { type: 'merge' })) as Project;
  await step('replace from a stale version', () => api.replace(kind, { ...created, metadata: { ...created.metadata, labels: { step: 'stale' } } }));
  await step('merge from a stale version', () => api.patch(kind, ns, 'p1', { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { step: 'stale' } } }, { type: 'merge' }).then(seen));
  await step('merge from the current version', () => api.patch(kind, ns, 'p1', { metadata: { resourceVersion: relabelled.metadata.resourceVersion, labels: { step: 'two' } } }, { type: 'merge' }).then(seen));
  await step('spec changed', () => api.patch(kind, ns, 'p1', { spec: { rotation: { interval: '360h' } } }, { type: 'merge' }).then(seen));
  const now = (await api.get(kind, ns, 'p1')) as Project;
  await step('status through its subresource', () => api.patch(kind, ns, 'p1', { metadata: { resourceVersion: now.metadata.resourceVersion }, status: { observedGeneration: 2 } }, { type: 'merge', subresource: 'status' }).then(seen));
  await step('status through the resource', () => api.patch(kind, ns, 'p1', { status: { observedGeneration: 9 } }, { type: 'merge' }).then(seen));

  // A watch from a list's resourceVersion, with bookmarks, ending after 5 s.
  const from = (await api.list(kind, { namespace: ns })).resourceVersion;
  const events: WatchEvent[] = [];
  const ended = new Promise<string>((resolve) => {
    void api.watch(kind, { namespace: ns, resourceVersion: from, timeoutSeconds: 5 }, (e) => void events.push(e), (error) => resolve(error ? `error ${error.message}` : 'ended')).catch((error: unknown) => resolve(`refused ${String(error)}`));
  });
  await api.create(kind, project('p2'));
  await api.patch(kind, ns, 'p2', { metadata: { labels: { watched: 'yes' } } }, { type: 'merge' });
  await remove('p2');
  const end = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r('still open after 15 s'), 15_000))]);
  const names = events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${(e.object as KubeObject).metadata.name}`);
  out.push(['watch', { events: names, bookmark: events.some((e) => e.type === 'BOOKMARK' && Number((e.object as KubeObject).metadata.resourceVersion) >= Number(from)), end }]);

  subject.compact?.();
  let stream: Promise<{ stop(): void }> | undefined;
  const expired = await new Promise<unknown>((resolve) => {
    const timer = setTimeout(() => resolve('no answer in 10 s'), 10_000);
    const done = (value: unknown) => {
      clearTimeout(timer);
      resolve(value);
    };
    stream = api.watch(kind, { namespace: ns, resourceVersion: '1', timeoutSeconds: 5 }, (e) => done(e.type === 'ERROR' ? { code: (e.object as { code?: number }).code } : `first event ${e.type}`), (error) => done(error instanceof KubeApiError ? { code: error.status } : `ended ${String(error)}`));
    stream.catch((error: unknown) => done(error instanceof KubeApiError ? { code: error.status } : String(error)));
  });
  await stream?.then((s) => s.stop(), () => undefined);
  out.push(['watch from a compacted version', expired]);

  await step('delete with a finalizer', () => remove('p1'));
  const held = (await api.get(kind, ns, 'p1')) as Project;
  out.push(['held by its finalizer', seen(held)]);
  await step('finalizer removed', () => api.patch(kind, ns, 'p1', { metadata: { resourceVersion: held.metadata.resourceVersion, finalizers: [] } }, { type: 'merge' }).then(() => 'patched'));
  await step('gone', () => api.get(kind, ns, 'p1'));
  await step('delete what is gone', () => remove('p1'));

  const applied = (labels: Record<string, string>) => ({ ...project('p3'), metadata: { name: 'p3', namespace: ns, labels } });
  await step('apply', () => api.apply(kind, applied({ a: '1', b: '1' })).then(seen));
  await step("apply over another's field", () => other.apply(kind, applied({ a: '2' })).then(seen));
  await step("apply over another's field, forced", () => other.apply(kind, applied({ a: '2' }), { force: true }).then(seen));
  await step('apply without a field another took', () => api.apply(kind, applied({ b: '1' })).then(seen));
  await step('apply without a field of its own', () => other.apply(kind, applied({})).then(seen));
  await step('same value, no conflict', () => other.apply(kind, applied({ b: '1' })).then(seen));
  const before = (await api.get(kind, ns, 'p3')) as Project;
  await step('an apply that changes nothing keeps the resourceVersion', async () => (await api.apply(kind, applied({ b: '1' }))).metadata.resourceVersion === before.metadata.resourceVersion);
  await step('a merge patch that changes nothing keeps it too', async () => (await api.patch(kind, ns, 'p3', { metadata: { labels: { b: '1' } } }, { type: 'merge' })).metadata.resourceVersion === before.metadata.resourceVersion);
  await remove('p3');
  await api.delete(Kinds.Namespace, undefined, ns).catch(() => undefined);
  return out;
}
