/**
 * What the caches' string sharing (src/kube/shared-strings.ts) saves: N converged orders and their two Secrets each, as
 * the API server returns them (parsed from JSON text, every string fresh), kept as parsed (the bare baseline) and kept as
 * the informers keep them, in the same process; the heap each set holds per order (both sets stay alive, so neither
 * is measured after the other's garbage), and the CPU per order of parsing, and of parsing and sharing.
 *
 *   node --expose-gc --import tsx bench/shared-strings.ts [ORDERS=10000]    # docs/benchmarks-operator.md
 */
import { withSharedStrings } from '../src/kube/shared-strings';
import type { KubeObject } from '../src/kube/object';

const orders = Number(process.argv[2] ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc;

/** A second of the fill: about five orders a second converged, as the bench's fill of 20,000 did. */
const at = (i: number) => `2026-12-07T15:${String(Math.floor(i / 300) % 60).padStart(2, '0')}:${String(Math.floor(i / 5) % 60).padStart(2, '0')}Z`;
const conditions = (i: number) =>
  [
    ['CredentialReady', 'CredentialMinted', 'generation 1 exists in Keystone'],
    ['DeliveryReady', 'Delivered', 'the Secret carries generation 1'],
    ['Ready', 'AllReady', 'CredentialReady and DeliveryReady are True'],
  ].map(([type, reason, message]) => ({ type, status: 'True', reason, message, lastTransitionTime: at(i), observedGeneration: 1 }));

/** An order, its delivered Secret and its child, as JSON text (the shapes of the bench's orders, bench/operator). */
function text(i: number): string {
  const uid = `68b9d46a-77d8-48bb-92a4-${String(i).padStart(12, '0')}`;
  const owner = { apiVersion: 'c5c3.io/v1alpha1', kind: 'KeystoneApplicationCredential', name: `o${i}`, uid, controller: true, blockOwnerDeletion: true };
  const labels = { 'c5c3.io/keystoneapplicationcredential-name': `o${i}`, 'c5c3.io/keystoneapplicationcredential-namespace': 'bench-tenant' };
  return JSON.stringify([
    {
      apiVersion: 'c5c3.io/v1alpha1',
      kind: 'KeystoneApplicationCredential',
      metadata: { name: `o${i}`, namespace: 'bench-tenant', uid, resourceVersion: String(100_000 + i), generation: 1, creationTimestamp: at(i), finalizers: ['c5c3.io/keystoneapplicationcredential-teardown'], labels: { 'bench/batch': `f${i % 40}` } },
      spec: { controlPlaneRef: { name: 'cp', namespace: 'bench-cp' }, userRef: { name: `u${i % 2000}` }, projectRef: { name: 'proj' }, rotation: { interval: '720h', gracePeriod: '24h' } },
      status: {
        credentialGeneration: 1,
        secretName: `o${i}-credentials`,
        credentialID: i.toString(16).padStart(32, 'a'),
        secretKeys: ['clouds.yaml', 'application_credential_id', 'application_credential_secret'],
        lastRotation: at(i),
        nextRotation: '2027-01-06T20:44:02Z',
        credentialExpiresAt: '2027-01-07T20:44:02Z',
        conditions: conditions(i),
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: `o${i}-credentials`, namespace: 'bench-tenant', uid: `s${uid}`, resourceVersion: String(200_000 + i), creationTimestamp: at(i), labels, ownerReferences: [owner] },
      data: { 'clouds.yaml': 'Y'.repeat(440), application_credential_id: 'Z'.repeat(44), application_credential_secret: 'W'.repeat(60) },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: `o${i}-d41a63cb-applicationcredential-secret-v1`, namespace: 'bench-tenant', uid: `c${uid}`, resourceVersion: String(300_000 + i), creationTimestamp: at(i), labels: { ...labels, 'c5c3.io/keystoneapplicationcredential-cluster': '' } },
      data: { value: 'V'.repeat(60) },
    },
  ]);
}

const texts = Array.from({ length: orders }, (_, i) => text(i));

function keep(share: boolean): { readonly objects: KubeObject[]; readonly bytes: number; readonly us: number } {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const objects: KubeObject[] = [];
  for (const t of texts) for (const o of JSON.parse(t) as KubeObject[]) objects.push(share ? withSharedStrings(o) : o);
  const us = ((performance.now() - started) * 1000) / orders;
  gc?.();
  return { objects, bytes: (process.memoryUsage().heapUsed - before) / orders, us };
}

const parsed = keep(false);
const shared = keep(true);
console.log(`| orders | heap per order (order and 2 Secrets), as parsed | shared | CPU per order: parse | parse and share |`);
const heap = gc ? [`${parsed.bytes.toFixed(0)} B`, `${shared.bytes.toFixed(0)} B (${(shared.bytes / parsed.bytes).toFixed(2)}×)`] : ['run with `node --expose-gc`', '-'];
console.log(`| ${orders} | ${heap[0]} | ${heap[1]} | ${parsed.us.toFixed(1)} µs | ${shared.us.toFixed(1)} µs |`);
if (parsed.objects.length !== shared.objects.length) throw new Error('the sets differ');
