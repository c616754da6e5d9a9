// @needs kube keystone
/**
 * The consumer handoff on the real API server with the real deployment, replicaset, statefulset and daemonset
 * controllers (a kube-controller-manager of their own, test/support/workload-controllers.ts; no kubelet: the test reads
 * ReplicaSets, ControllerRevisions and the pod template), the real Keystone, and the operator as a child process under
 * the RBAC that `keystone-appcred manifests --consumer-handoff` synthesizes:
 *
 * - each switch (generation 1, the scheduled rotation to 2, a raised generation 3) gives the opted-in Deployment,
 *   StatefulSet and DaemonSet a new revision within seconds, carrying the generation; an unannotated Deployment and an
 *   opted-in one in another namespace are untouched;
 * - a paused Deployment (it cannot roll) gives the Warning `RolloutOverdue` on the order before
 *   `previousCredentialDeleteAt`, and the overdue metric;
 * - the operator SIGKILLed right after the switch to generation 4: after the restart each workload is rolled, once;
 * - the feature off (the construct's default RBAC, no workload rule, no flag): the switch to generation 5 patches
 *   nothing, and the operator's start-up line names the opted-in workloads (given a read-only binding to see them).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderManifests } from '../../src/cli/manifests';
import { OPT_IN, TEMPLATE_GENERATIONS } from '../../src/handoff';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures } from '../support/credential-fixtures';
import { uniqueName } from '../support/keystone-fixtures';
import { afterAction, killAt, logOffset } from '../support/kill-point';
import { applyOk, eventually, getJson, kubectl, type KubeObject } from '../support/kubectl';
import { installCrds, manifestObjects, metricsText, operatorKubeconfig, operatorLog, releaseLeftovers, removeOperatorRbac, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION } from '../support/operator';
import type { Server } from '../support/proc';
import { MIN_SECRET_LENGTH, scanForSecrets } from '../support/secret-scan';
import { synthesizeManifests } from '../support/synth';
import { startWorkloadControllers } from '../support/workload-controllers';

jest.setTimeout(240_000);

const NS = 'kac-handoff';
const OTHER_NS = 'kac-handoff-other';
const CP_NS = 'kac-handoff-cp';
const ON = { namespace: 'kac-handoff-operator', binding: 'kac-handoff-operator' };
const OFF = { namespace: 'kac-handoff-operator-off', binding: 'kac-handoff-operator-off' };
const SECRET = 'app-credentials';
const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('handoff'), projectName: uniqueName('handoff') });
const GRACE_MS = 30_000;

type Kind = 'Deployment' | 'StatefulSet' | 'DaemonSet';
/** The opted-in workloads that roll, by kind and name. */
const ROLLING: readonly (readonly [Kind, string])[] = [['Deployment', 'api'], ['StatefulSet', 'db'], ['DaemonSet', 'agent']];

let unlock: (() => void) | undefined;
let controllers: Server | undefined;
let operator: OperatorProcess | undefined;
let workDir = '';
const operators: OperatorProcess[] = [];

/** A workload reading the delivered Secret into its environment at start-up: the consumer the handoff is for. */
function workload(kind: Kind, name: string, options: { namespace?: string; optIn?: boolean; paused?: boolean } = {}): KubeObject {
  const labels = { app: name };
  const template = {
    metadata: { labels },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          env: [
            { name: 'OS_APPLICATION_CREDENTIAL_ID', valueFrom: { secretKeyRef: { name: SECRET, key: 'application_credential_id' } } },
            { name: 'OS_APPLICATION_CREDENTIAL_SECRET', valueFrom: { secretKeyRef: { name: SECRET, key: 'application_credential_secret' } } },
          ],
        },
      ],
    },
  };
  const spec =
    kind === 'DaemonSet'
      ? { selector: { matchLabels: labels }, template }
      : { replicas: 0, selector: { matchLabels: labels }, template, ...(kind === 'StatefulSet' ? { serviceName: name } : {}), ...(options.paused ? { paused: true } : {}) };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace: options.namespace ?? NS, ...(options.optIn === false ? {} : { annotations: { [OPT_IN]: SECRET } }) },
    spec,
  } as KubeObject;
}

interface Revision {
  readonly revision: number;
  /** The pod template's generations annotation at that revision. */
  readonly generations?: string;
}

/** The revisions of a workload: its ReplicaSets (Deployment) or ControllerRevisions (StatefulSet, DaemonSet), oldest first. */
async function revisions(kind: Kind, name: string, namespace = NS): Promise<Revision[]> {
  const owned = (o: { metadata: { ownerReferences?: { kind: string; name: string }[] } }) => (o.metadata.ownerReferences ?? []).some((r) => r.kind === kind && r.name === name);
  if (kind === 'Deployment') {
    type ReplicaSet = { metadata: { ownerReferences?: { kind: string; name: string }[]; annotations?: Record<string, string> }; spec: { template: { metadata?: { annotations?: Record<string, string> } } } };
    const list = await getJson<{ items: ReplicaSet[] }>('replicasets', undefined, { namespace });
    return list.items
      .filter(owned)
      .map((rs) => ({ revision: Number(rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? 0), generations: rs.spec.template.metadata?.annotations?.[TEMPLATE_GENERATIONS] }))
      .sort((a, b) => a.revision - b.revision);
  }
  type ControllerRevision = { metadata: { ownerReferences?: { kind: string; name: string }[] }; revision: number; data: { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } } };
  const list = await getJson<{ items: ControllerRevision[] }>('controllerrevisions', undefined, { namespace });
  return list.items
    .filter(owned)
    .map((cr) => ({ revision: cr.revision, generations: cr.data.spec?.template?.metadata?.annotations?.[TEMPLATE_GENERATIONS] }))
    .sort((a, b) => a.revision - b.revision);
}

/** A workload as stored: its generation and its pod template's generations annotation. */
async function stored(kind: Kind, name: string, namespace = NS): Promise<{ generation: number; generations?: string }> {
  const w = await getJson<{ metadata: { generation: number }; spec: { template: { metadata?: { annotations?: Record<string, string> } } } }>(kind.toLowerCase(), name, { namespace });
  return { generation: w.metadata.generation, generations: w.spec.template.metadata?.annotations?.[TEMPLATE_GENERATIONS] };
}

/** Waits until each rolling workload's newest revision carries `generation`; returns the ms from `since` to the last. */
async function rolledTo(generation: number, since: number): Promise<number> {
  let last = 0;
  for (const [kind, name] of ROLLING) {
    await eventually(async () => (await revisions(kind, name)).at(-1)?.generations === `${SECRET}=${generation}`, 30_000, 100);
    last = Math.max(last, Date.now() - since);
  }
  return last;
}

/** Waits for the order to deliver `generation` (status.secretName set); returns its status. */
async function delivers(generation: number, timeoutMs = 90_000) {
  return eventually(async () => {
    const o = await fx.order('app');
    return o.status?.credentialGeneration === generation && o.status.secretName === SECRET && condition(o, 'Ready')?.status === 'True' && o.status;
  }, timeoutMs).then(async (status) => {
    await fx.delivered('app'); // for the secrets scan
    return status;
  });
}

/** Waits for the grace period of the superseded generation to end (the sweep). */
async function swept(): Promise<void> {
  await eventually(async () => (await fx.order('app')).status?.previousCredentialID === undefined, GRACE_MS + 60_000, 500);
}

async function launch(name: string, kubeconfig: string, namespace: string, args: readonly string[] = []): Promise<OperatorProcess> {
  const op = await startOperator({ name, kubeconfig, namespace, logDir: workDir, args: [...QUICK_ELECTION, ...args] });
  operators.push(op);
  await waitReady(op);
  return op;
}

/** The handoff's Events on the order `app`. */
async function handoffEvents(): Promise<{ type: string; reason: string; note: string; eventTime: string }[]> {
  const list = await getJson<{ items: { type: string; reason: string; note: string; eventTime: string; regarding: { name: string; kind: string } }[] }>('events.events.k8s.io', undefined, { namespace: NS });
  return list.items.filter((e) => e.regarding.kind === 'KeystoneApplicationCredential' && e.regarding.name === 'app' && (e.reason === 'WorkloadRolled' || e.reason === 'RolloutOverdue'));
}

beforeAll(async () => {
  unlock = await lockCluster('consumer-handoff.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
  controllers = await startWorkloadControllers(join(workDir, 'handoff-workload-controllers'));
  await installCrds(synthesizeManifests());
  // The operator's RBAC as `keystone-appcred manifests --consumer-handoff` prints it.
  const handoffManifests = mkdtempSync(join(workDir, 'handoff-manifests-'));
  writeFileSync(join(handoffManifests, 'operator.k8s.yaml'), renderManifests({ image: 'keystone-appcred', tag: '0.3.0', consumerHandoff: true }));
  const kubeconfig = await operatorKubeconfig(handoffManifests, ON, join(workDir, 'handoff-on.kubeconfig'));
  for (const ns of [NS, OTHER_NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
  await applyOk(fx.adminSecret(), { fieldManager: 'kac-test' });
  await applyOk(fx.controlPlane(), { fieldManager: 'kac-test' });
  await applyOk(
    [
      ...ROLLING.map(([kind, name]) => workload(kind, name)),
      workload('Deployment', 'stuck', { paused: true }),
      workload('Deployment', 'plain', { optIn: false }),
      workload('Deployment', 'elsewhere', { namespace: OTHER_NS }),
    ],
    { fieldManager: 'kac-test' },
  );
  // Each workload's controller has written its first revision.
  for (const [kind, name] of ROLLING) await eventually(async () => (await revisions(kind, name)).length === 1, 30_000);
  operator = await launch('handoff-a', kubeconfig, ON.namespace, ['--consumer-handoff']);
}, LOCKED_SETUP_MS);

afterAll(async () => {
  for (const op of operators) await op.server.stop(5_000);
  await controllers?.stop();
  await releaseLeftovers([NS, CP_NS]);
  for (const ns of [NS, OTHER_NS, CP_NS, ON.namespace, OFF.namespace]) await kubectl(['delete', 'namespace', ns, '--wait=false']);
  for (const identity of [ON, OFF]) await removeOperatorRbac(identity);
  await kubectl(['delete', 'clusterrolebinding,clusterrole', 'kac-handoff-workload-reader', '--ignore-not-found']);
  unlock?.();
});

describe('the consumer handoff with the real workload controllers', () => {
  let untouched: { plain: { generation: number }; elsewhere: { generation: number } };
  const latencies: Record<string, number> = {};

  it('generation 1 is delivered: each opted-in workload in the namespace is rolled to it; the unannotated one and the one in another namespace are untouched', async () => {
    const before = { plain: await stored('Deployment', 'plain'), elsewhere: await stored('Deployment', 'elsewhere', OTHER_NS) };
    await applyOk([...fx.identityOrders(), fx.credentialOrder('app', { interval: '1m', gracePeriod: `${GRACE_MS / 1000}s` })], { fieldManager: 'kac-test' });
    await delivers(1);
    await rolledTo(1, Date.now());
    for (const [kind, name] of ROLLING) expect((await revisions(kind, name)).map((r) => r.generations)).toEqual([undefined, `${SECRET}=1`]);
    expect((await stored('Deployment', 'stuck')).generations).toBe(`${SECRET}=1`);
    untouched = before;
    expect(await stored('Deployment', 'plain')).toEqual({ generation: before.plain.generation });
    expect(await stored('Deployment', 'elsewhere', OTHER_NS)).toEqual({ generation: before.elsewhere.generation });
    // An Event on the order per rolled workload (the paused one is rolled too; its controller does not roll it out).
    const rolled = (await handoffEvents()).filter((e) => e.reason === 'WorkloadRolled');
    expect(rolled.map((e) => e.note.split(' ').slice(1, 3).join(' ')).sort()).toEqual(['DaemonSet agent', 'Deployment api', 'Deployment stuck', 'StatefulSet db']);
  });

  it('the scheduled rotation: within seconds of the switch to generation 2, a new revision of each carrying it', async () => {
    const g1 = await fx.delivered('app');
    const switched = await eventually(async () => {
      const doc = await fx.delivered('app');
      return doc && doc.application_credential_id !== g1?.application_credential_id && Date.now();
    }, 120_000, 100);
    latencies.scheduled = await rolledTo(2, switched);
    for (const [kind, name] of ROLLING) expect((await revisions(kind, name)).map((r) => r.generations)).toEqual([undefined, `${SECRET}=1`, `${SECRET}=2`]);
    // Stop the schedule: the next rotations are raised by hand.
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { rotation: { interval: '0s' } } });
  });

  it('the paused Deployment cannot roll: a Warning RolloutOverdue on the order before previousCredentialDeleteAt, and the overdue metric', async () => {
    const status = await delivers(2);
    const deleteAt = Date.parse(status.previousCredentialDeleteAt as string);
    const warning = await eventually(async () => (await handoffEvents()).find((e) => e.reason === 'RolloutOverdue'), GRACE_MS + 10_000, 250);
    expect(warning.type).toBe('Warning');
    expect(warning.note).toContain('Deployment stuck has not finished its rollout to generation 2: its rollout is paused (spec.paused)');
    expect(Date.parse(warning.eventTime)).toBeLessThan(deleteAt);
    latencies.warningBeforeDelete = deleteAt - Date.parse(warning.eventTime);
    expect(await metricsText(operator as OperatorProcess)).toMatch(new RegExp(`^keystone_appcred_handoff_rollouts_overdue\\{namespace="${NS}",name="app"\\} 1$`, 'm'));
    // Only the paused one: the others finished their rollouts.
    expect((await handoffEvents()).filter((e) => e.reason === 'RolloutOverdue')).toHaveLength(1);
  });

  it('a raised generation: generation 3 gives each a new revision within seconds', async () => {
    await swept();
    const raised = Date.now();
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 3 } });
    await delivers(3);
    latencies.raised = await rolledTo(3, raised);
    for (const [kind, name] of ROLLING) expect((await revisions(kind, name)).at(-1)?.generations).toBe(`${SECRET}=3`);
    expect(await stored('Deployment', 'plain')).toEqual({ generation: untouched.plain.generation });
    expect(await stored('Deployment', 'elsewhere', OTHER_NS)).toEqual({ generation: untouched.elsewhere.generation });
    process.stderr.write(`[consumer-handoff] switch → new revision of every opted-in workload: scheduled ${latencies.scheduled} ms, raised (from the raise) ${latencies.raised} ms; Warning ${latencies.warningBeforeDelete} ms before previousCredentialDeleteAt\n`);
  });

  it('SIGKILL right after the switch to generation 4: after the restart each workload is rolled, once', async () => {
    await swept();
    const before = new Map<string, number>();
    for (const [kind, name] of ROLLING) before.set(name, (await stored(kind, name)).generation);
    const killed = operator as OperatorProcess;
    const kill = killAt(killed, afterAction('switch', 'deliver', /^switch$/), { offset: logOffset(killed.server.log), nth: 1, delayMs: 0, timeoutMs: 120_000 });
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 4 } });
    await kill;
    await eventually(async () => killed.server.exited() !== undefined, 10_000);
    const rolledBeforeKill = operatorLog(killed).filter((l) => l.msg === 'handoff' && l.outcome === 'rolled' && l.generation === 4).length;
    operator = await launch('handoff-b', join(workDir, 'handoff-on.kubeconfig'), ON.namespace, ['--consumer-handoff']);
    await delivers(4);
    await rolledTo(4, Date.now());
    // Settled: a few more seconds change nothing.
    await new Promise((r) => setTimeout(r, 5_000));
    for (const [kind, name] of ROLLING) {
      const revs = await revisions(kind, name);
      expect(revs.filter((r) => r.generations === `${SECRET}=4`)).toHaveLength(1);
      expect((await stored(kind, name)).generation).toBe((before.get(name) as number) + 1);
    }
    process.stderr.write(`[consumer-handoff] killed after the switch to generation 4; rolls logged before the kill: ${rolledBeforeKill} of 4\n`);
  });

  it('the feature off: the RBAC has no workload rule, the start-up line names the opted-in workloads, and the switch to generation 5 patches nothing', async () => {
    await (operator as OperatorProcess).server.stop(5_000);
    const defaults = synthesizeManifests();
    const rules = (manifestObjects(defaults, 'operator').find((d) => d.kind === 'ClusterRole') as KubeObject & { rules: { apiGroups: string[] }[] }).rules;
    expect(rules.length).toBeGreaterThan(5);
    expect(rules.filter((r) => r.apiGroups.includes('apps'))).toEqual([]);
    const kubeconfig = await operatorKubeconfig(defaults, OFF, join(workDir, 'handoff-off.kubeconfig'));
    const sa = `system:serviceaccount:${OFF.namespace}:operator`;
    expect((await kubectl(['auth', 'can-i', 'patch', 'deployments', '-n', NS, `--as=${sa}`])).stdout.trim()).toBe('no');
    // Read-only, for the test: lets the start-up check see the opted-in workloads (the construct grants nothing here).
    await applyOk(
      [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kac-handoff-workload-reader' }, rules: [{ apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets'], verbs: ['list'] }] } as KubeObject,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'kac-handoff-workload-reader' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kac-handoff-workload-reader' },
          subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: OFF.namespace }],
        } as KubeObject,
      ],
      { fieldManager: 'kac-test' },
    );
    const before = new Map<string, { generation: number; generations?: string }>();
    for (const [kind, name] of [...ROLLING, ['Deployment', 'stuck'] as const]) before.set(name, await stored(kind, name));
    operator = await launch('handoff-off', kubeconfig, OFF.namespace);
    const line = await eventually(async () => operatorLog(operator as OperatorProcess).find((l) => typeof l.msg === 'string' && l.msg.startsWith('consumer handoff is off')), 30_000);
    expect(line).toMatchObject({ level: 'warn', annotation: OPT_IN, workloads: 5 });
    expect(operatorLog(operator as OperatorProcess).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('consumer handoff is off'))).toHaveLength(1);

    await swept();
    await fx.merge('keystoneapplicationcredential', 'app', { spec: { credentialGeneration: 5 } });
    await delivers(5);
    await new Promise((r) => setTimeout(r, 5_000));
    for (const [kind, name] of [...ROLLING, ['Deployment', 'stuck'] as const]) expect(await stored(kind, name)).toEqual(before.get(name));
    expect(operatorLog(operator as OperatorProcess).filter((l) => l.msg === 'handoff')).toEqual([]);
  });

  it('no minted secret appears in the operators\' logs or the Events', async () => {
    const minted = [...fx.secretsSeen].filter((s) => s.length >= MIN_SECRET_LENGTH);
    expect(minted.length).toBeGreaterThanOrEqual(3);
    const texts = [
      ...operators.map((op) => ({ source: `operator log ${op.name}`, text: readFileSync(op.server.log, 'utf8') })),
      ...(await fx.eventTexts([NS])),
    ];
    expect(scanForSecrets(texts, [...minted, fx.env.adminPassword])).toEqual([]);
  });
});
