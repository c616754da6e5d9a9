/**
 * The bytes a piece of work allocates, garbage included, from V8's sampling heap profiler in this process (the
 * inspector's HeapProfiler with the objects collected by both collectors kept in the sample). A sample is taken every
 * `intervalBytes` of allocation on average, so the figure is an estimate whose error shrinks with the bytes measured:
 * meant for megabytes. No library reads the profiler from inside the process, hence this small wrapper of the
 * inspector protocol's three calls.
 */
import { Session } from 'node:inspector/promises';

/** A node of the sampled allocation tree: bytes allocated by this frame itself, and its callees. */
interface SampledNode {
  readonly selfSize: number;
  readonly children: readonly SampledNode[];
}

const total = (node: SampledNode): number => node.children.reduce((sum, child) => sum + total(child), node.selfSize);

/** Runs `work` and returns about how many bytes it allocated (live or garbage by the end). */
export async function allocatedBytes(work: () => Promise<void>, intervalBytes = 1024): Promise<number> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await work();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SampledNode } };
    return total(profile.head);
  } finally {
    session.disconnect();
  }
}
