/**
 * The operator's image against the bare process: the image built from the Dockerfile (tools/image/build.ts, cached by its
 * inputs) run as the Operator construct's Deployment describes it (test/support/pod.ts: its own namespaces, a read-only
 * root, the service account's token), interleaved with the same compiled operator started on the host
 * (`node lib/src/cli/main.js operator`, the construct's runtime environment, a kubeconfig of a service account with the
 * same RBAC), both against one real API server with nothing to reconcile:
 *
 * 1. start-up to ready, median of R rounds of each, the order swapped every round: as the process itself counts it
 *    (its `ready: caches synced` line's `sinceProcessStartMs`), whose ratio is what running in the image costs the
 *    operator, and from the start of the pod (or the process) to `/readyz` answering 200, which adds the pod runner's
 *    own set-up (namespaces, mounts, the forwarder of its ports: a test harness, not a runtime's cost);
 * 2. idle RSS after 10 s, in the last round of each;
 * 3. the image's size, and how it was had (built, and how long, or reused).
 *
 *   npm run build && npx tsx bench/image.ts [rounds=3]
 *
 * Needs root, buildah, mmdebstrap and iproute2 (the image tests' setup installs them; see docs/testing.md, "The image").
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Testing } from 'cdk8s';
import { Operator, OpenBaoAuth } from '../constructs/operator';
import { OperatorRuntimeEnv } from '../src/api/operator-env';
import { buildImage, formatSize, type BaseChoice } from '../tools/image/build';
import { startKube } from '../test/support/kube';
import { apply, eventually, getJson, kubectlOk, type KubeObject } from '../test/support/kubectl';
import { installCrds, operatorKubeconfig, startOperator, waitReady } from '../test/support/operator';
import { mountImage, podNameOf, startPod, type DeploymentLike, type Pod } from '../test/support/pod';
import { synthesizeManifests } from '../test/support/synth';
import { conditions, median, ms, printTable, type Figure } from './report';

const REPO = resolve(__dirname, '..');

const rssMiB = (pid: number): number => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
const sleep = (msecs: number) => new Promise((done) => setTimeout(done, msecs));

async function main(rounds: number): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/image.ts runs buildah and the pod as root');
  const work = mkdtempSync(join(tmpdir(), 'kac-bench-image-'));
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const image = await buildImage({ base: (process.env.KAC_IMAGE_BASE ?? 'local') as BaseChoice, tag: (hash) => `localhost/keystone-appcred:bench-${hash.slice(0, 12)}`, log: (l) => process.stderr.write(`[image] ${l}\n`) });
    const kube = await startKube(join(work, 'kube'));
    stops.push(kube.stop);
    Object.assign(process.env, kube.env);
    const manifests = await installCrds(synthesizeManifests(work));

    // The image's side: the construct's objects applied, its Deployment read back, its root file system mounted.
    const chart = Testing.chart();
    const [repo, tag] = [image.tag.slice(0, image.tag.lastIndexOf(':')), image.tag.slice(image.tag.lastIndexOf(':') + 1)];
    new Operator(chart, 'operator', { image: repo, tag, openBao: { address: 'http://127.0.0.1:1', auth: OpenBaoAuth.kubernetes({ role: 'bench' }) } });
    const objects = Testing.synth(chart) as KubeObject[];
    const applied = await apply(objects, { force: true });
    if (applied.code !== 0) throw new Error(applied.stderr);
    const synthesized = objects.find((o) => o.kind === 'Deployment') as KubeObject;
    const deployment = await getJson<DeploymentLike & KubeObject>('deployment', synthesized.metadata.name, { namespace: synthesized.metadata.namespace });
    const rootfs = await mountImage(image.tag);
    stops.push(() => rootfs.remove());
    const api = new URL(process.env.KAC_KUBE_SERVER as string);
    const namespace = deployment.metadata.namespace as string;
    const sa = deployment.spec.template.spec.serviceAccountName as string;
    const caCert = readFileSync(process.env.KAC_KUBE_CA_FILE as string, 'utf8');

    // The bare side: the same build, on the host.
    const kubeconfig = await operatorKubeconfig(manifests, { namespace: 'bench-bare', binding: 'bench-bare' }, join(work, 'bare.kubeconfig'));
    const bareEnv = { ...OperatorRuntimeEnv, NODE_ENV: 'production' };

    const imageTimes: number[] = [];
    const bareTimes: number[] = [];
    const imageInProcess: number[] = [];
    const bareInProcess: number[] = [];
    /** The phases of each start, in the process, by its log lines: loaded (`operator starting`), connected, ready. */
    const phases: Record<'image' | 'bare', { loaded: number[]; connected: number[] }> = { image: { loaded: [], connected: [] }, bare: { loaded: [], connected: [] } };
    /** The process's own start-up to ready, from its log; its phases recorded under `side`. */
    const inProcess = async (log: string, side: 'image' | 'bare'): Promise<number> => {
      const lines = await eventually(async () => {
        const all = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { time: string; msg: string; sinceProcessStartMs?: number });
        return all.some((l) => l.msg === 'ready: caches synced') && all;
      }, 10_000, 50);
      const ready = lines.find((l) => l.msg === 'ready: caches synced') as { time: string; sinceProcessStartMs: number };
      const start = Date.parse(ready.time) - ready.sinceProcessStartMs;
      const at = (msg: string) => Date.parse(lines.find((l) => l.msg === msg)?.time ?? '') - start;
      phases[side].loaded.push(at('operator starting'));
      phases[side].connected.push(at('kubernetes configuration loaded'));
      return ready.sinceProcessStartMs;
    };
    let imageRss = 0;
    let bareRss = 0;
    const runImage = async (round: number): Promise<void> => {
      const token = (await kubectlOk(['create', 'token', sa, '-n', namespace, '--duration=3607s'])).trim();
      const pod: Pod = await startPod({ rootfs, deployment, podName: podNameOf(deployment.metadata.name, 'bench00000'), dir: mkdtempSync(join(work, 'p-')), apiServer: { host: api.hostname, port: Number(api.port) }, serviceAccount: { token, caCert } });
      await eventually(async () => {
        if (pod.server.exited() !== undefined) throw new Error(`the pod exited (${pod.server.exited()}): ${readFileSync(pod.server.log, 'utf8')}`);
        return (await fetch(`http://127.0.0.1:${pod.ports.health}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined))?.status === 200;
      }, 120_000, 50);
      imageTimes.push(Date.now() - pod.spawnedAt);
      imageInProcess.push(await inProcess(pod.server.log, 'image'));
      if (round === rounds) {
        await sleep(10_000);
        imageRss = rssMiB(pod.pid() as number);
      }
      await pod.stop();
    };
    const runBare = async (round: number): Promise<void> => {
      const bare = await startOperator({ name: `bare-${round}`, kubeconfig, namespace: 'bench-bare', logDir: work, command: [process.execPath, join(REPO, 'lib/src/cli/main.js'), 'operator'], env: bareEnv });
      bareTimes.push(await waitReady(bare));
      bareInProcess.push(await inProcess(bare.server.log, 'bare'));
      if (round === rounds) {
        await sleep(10_000);
        bareRss = rssMiB(bare.server.process.pid as number);
      }
      await bare.server.stop(30_000);
    };
    // Interleaved, the order swapped every round.
    for (let round = 1; round <= rounds; round++) {
      for (const step of round % 2 === 1 ? [runImage, runBare] : [runBare, runImage]) await step(round);
      process.stderr.write(`[bench] round ${round}: image ${imageInProcess[round - 1]} ms in-process (${imageTimes[round - 1]} ms from the pod's start), bare ${bareInProcess[round - 1]} ms (${bareTimes[round - 1]} ms)\n`);
    }
    const figures: Figure[] = [
      { figure: 'start-up to ready, in the process (median)', value: ms(median(imageInProcess)), baseline: ms(median(bareInProcess)), ratio: median(imageInProcess) / median(bareInProcess) },
      { figure: '… of it: the code loaded (`operator starting`)', value: ms(median(phases.image.loaded)), baseline: ms(median(phases.bare.loaded)), ratio: median(phases.image.loaded) / median(phases.bare.loaded) },
      { figure: '… of it: the configuration loaded and checked', value: ms(median(phases.image.connected)), baseline: ms(median(phases.bare.connected)), ratio: median(phases.image.connected) / median(phases.bare.connected) },
      { figure: "start-up to /readyz 200 from the pod's start (median)", value: ms(median(imageTimes)), baseline: ms(median(bareTimes)), ratio: median(imageTimes) / median(bareTimes) },
      { figure: 'idle RSS after 10 s, nothing to reconcile', value: `${imageRss} MiB`, baseline: `${bareRss} MiB` },
      { figure: `image ${image.tag}`, value: formatSize(image.sizeBytes), baseline: `on ${image.base.ref}` },
      { figure: 'image build', value: image.cached ? `reused, ${ms(image.ms)}` : `built in ${(image.ms / 1000).toFixed(0)} s`, baseline: image.base.madeMs ? `base made in ${(image.base.madeMs / 1000).toFixed(0)} s` : '-' },
    ];
    printTable(
      "The operator's image, run as the construct's Deployment, against the bare process",
      `${conditions(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)}; ${rounds} rounds each, interleaved; in-process, image: ${imageInProcess.join(', ')} ms, bare: ${bareInProcess.join(', ')} ms`,
      figures,
    );
  } finally {
    for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

main(Number(process.argv[2] ?? 3)).catch((error: unknown) => {
  process.stderr.write(`bench/image.ts: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
