// @needs kube keystone openbao release-0.2.0
/**
 * The upgrade from keystone-appcred 0.2.0 (built from commit fc09924, tagged `v0.2.0`, by the `release-0.2.0`
 * component) to this release by each install channel 0.2.0 has: its static manifests and its kustomize base
 * (0.2.0 has no Helm chart; `helm upgrade` between two builds of this release's chart is
 * test/e2e/helm-install.test.ts). For each channel, in turn:
 *
 * 1. 0.2.0 installed by that channel from its own tree (`kubectl apply --server-side -f deploy/install.yaml`, or `-k
 *    deploy/kustomize/base`), its operator (0.2.0's build) running as the installed ServiceAccount, with orders in
 *    flight: one rotated by hand, its generation 1 in the grace period; one steady. A consumer probe authenticates with
 *    the delivered Secret every second throughout.
 * 2. This release applied the same way, as docs/upgrading.md says (the CRDs first, then the rest; or the kustomize
 *    base), then the new operator started beside the old one and the old one stopped (SIGTERM, the Lease handed over).
 * 3. Asserted, for 30 seconds of the new release: nothing minted, deleted or changed (Keystone, statuses, delivered
 *    Secrets), no Keystone call by the new operator and one API write per order, the status field 0.2.0 never wrote
 *    (`status.backupPath`, the record of its backup's migration), the probe never failed; then the orders deleted
 *    under the new release leave nothing in Keystone.
 *
 * The upgrade from 0.1.0, with a target cluster, a foreign installation and the Pulumi face, stays
 * test/e2e/upgrade.test.ts. Prints each channel's timeline.
 */
import { join, resolve } from 'node:path';
import { childPrefix } from '../../src/api';
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { condition, credentialFixtures, type Probe } from '../support/credential-fixtures';
import { uniqueName } from '../support/keystone-fixtures';
import { applyOk, eventually, kubectl, kubectlOk } from '../support/kubectl';
import { metricSum, metricsText, releaseLeftovers, serviceAccountKubeconfig, startOperator, waitReady, type OperatorProcess, QUICK_ELECTION, openBaoTokenEnv } from '../support/operator';

jest.setTimeout(600_000);

const REPO = resolve(__dirname, '..', '..');
const PREVIOUS = process.env.KAC_RELEASE_0_2_0_DIR as string;
const SYSTEM = 'keystone-appcred-system';
const SA = 'keystone-appcred-operator';
const ORDERS = ['graced', 'steady'] as const;

/** How a channel applies a release's tree. */
const CHANNELS = {
  'static manifests': (tree: string) => [
    ['apply', '--server-side', '-f', join(tree, 'deploy', 'crds.yaml')],
    ['apply', '--server-side', '-f', join(tree, 'deploy', 'install.yaml')],
  ],
  kustomize: (tree: string) => [['apply', '--server-side', '-k', join(tree, 'deploy', 'kustomize', 'base')]],
} as const;

let unlock: (() => void) | undefined;
let workDir = '';
const running: OperatorProcess[] = [];
const timeline: string[] = [];

beforeAll(async () => {
  unlock = await lockCluster('upgrade-channels.test.ts');
  workDir = process.env.KAC_TEST_WORKDIR as string;
}, LOCKED_SETUP_MS);

afterAll(async () => {
  for (const op of running) await op.server.stop(5_000);
  process.stderr.write(`[upgrade-channels] ${timeline.join('; ')}\n`);
  unlock?.();
});

describe.each(Object.keys(CHANNELS) as (keyof typeof CHANNELS)[])('the upgrade from 0.2.0 by its %s', (channel) => {
  const slug = channel.replace(/\s+/g, '-');
  const NS = `kac-up2-${slug}`;
  const CP_NS = `kac-up2-${slug}-cp`;
  const fx = credentialFixtures({ namespace: NS, cpNamespace: CP_NS, userName: uniqueName('up2'), projectName: uniqueName('up2') });
  const [projectOrder, userOrder, roleAssignment] = fx.identityOrders();
  let old: OperatorProcess;
  let next: OperatorProcess;
  let probe: Probe;
  let before = '';
  // The test clusters are shared by the files in turn, and others applied this release's CRDs under their own field
  // managers (helm, kac-test): 0.2.0's older CRDs conflict with those on `.spec.versions`, where a real 0.2.0
  // installation's have the channel's one manager. So 0.2.0 is installed taking those fields over (the precondition);
  // this release is then applied exactly as docs/install/upgrading.md says.
  const apply = async (tree: string, takeOver = false) => {
    for (const args of CHANNELS[channel](tree)) await kubectlOk([...args, ...(takeOver ? ['--force-conflicts'] : [])]);
  };
  const start = async (name: string, command: readonly string[] | undefined) => {
    const kubeconfig = await serviceAccountKubeconfig({ namespace: SYSTEM, serviceAccount: SA }, join(workDir, `${name}.kubeconfig`));
    const op = await startOperator({ name, kubeconfig, namespace: SYSTEM, logDir: workDir, args: QUICK_ELECTION, env: openBaoTokenEnv(), ...(command ? { command, cwd: PREVIOUS } : {}) });
    running.push(op);
    await waitReady(op);
    return op;
  };
  // Everything the upgrade must leave as it was: Keystone, the delivered Secrets, the statuses but for the one field
  // 0.2.0 never wrote, `status.backupPath` (the record of the backup's migration, issue 46: each order's first pass
  // under this release reads its two OpenBao paths once and records it, docs/install/upgrading.md).
  const snapshot = async () => JSON.stringify({
    keystone: await fx.userCredentials(''),
    orders: await Promise.all(ORDERS.map(async (n) => {
      const status: Record<string, unknown> = { ...(await fx.order(n)).status };
      delete status.backupPath;
      return [status, await fx.delivered(n)];
    })),
  });

  afterAll(async () => {
    await probe?.stop();
    await releaseLeftovers([NS, CP_NS]);
    // Gone before the next channel installs: an operator of the next channel would otherwise act on this channel's
    // objects while their namespace terminates (a finalizer, a status), and its writes would be counted as the upgrade's.
    for (const ns of [NS, CP_NS]) await kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=120s', '--ignore-not-found']);
  });

  it(`installs 0.2.0 by its ${channel}; its operator delivers the orders; one is rotated into its grace period`, async () => {
    const t0 = Date.now();
    await apply(PREVIOUS, true);
    old = await start(`up2-${slug}-old`, [process.execPath, join(PREVIOUS, 'lib', 'src', 'cli', 'main.js'), 'operator']);
    for (const ns of [NS, CP_NS]) await kubectl(['create', 'namespace', ns]);
    await applyOk([fx.adminSecret(), fx.controlPlane({ assigned: true }), projectOrder, userOrder, roleAssignment, fx.credentialOrder('graced', { interval: '720h', gracePeriod: '30m' }), fx.credentialOrder('steady', { interval: '720h', gracePeriod: '1h' })], { fieldManager: 'kac-test' });
    for (const name of ['graced', 'steady']) {
      await eventually(async () => {
        const o = await fx.order(name);
        return o.status?.credentialGeneration === 1 && condition(o, 'Ready')?.status === 'True';
      }, 120_000);
    }
    probe = fx.probe('graced');
    const g1 = (await fx.delivered('graced')) as Record<string, string>;
    await fx.merge('keystoneapplicationcredential', 'graced', { spec: { credentialGeneration: 2 } });
    await eventually(async () => {
      const o = await fx.order('graced');
      return o.status?.credentialGeneration === 2 && o.status.previousCredentialID === g1.application_credential_id;
    }, 60_000);
    timeline.push(`${channel}: 0.2.0 installed, orders delivered in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });

  it(`upgrades by this release's ${channel}: nothing minted, deleted or changed; no Keystone call; one write per order, its status.backupPath; the probe never fails`, async () => {
    before = await snapshot();
    const t0 = Date.now();
    await apply(REPO);
    next = await start(`up2-${slug}-new`, undefined);
    await old.server.stop(10_000);
    await eventually(async () => (await metricsText(next)).includes('keystone_appcred_leader 1') || undefined, 60_000, 250);
    timeline.push(`${channel}: applied and led by the new operator in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, 30_000));
    const metrics = await metricsText(next);
    const figures = { calls: metricSum(metrics, 'keystone_appcred_keystone_requests_total'), writes: metricSum(metrics, 'keystone_appcred_api_writes_total') };
    const written = metrics.split('\n').filter((l) => l.startsWith('keystone_appcred_api_writes_total{')).join(', ');
    timeline.push(`${channel}: ${figures.calls} Keystone calls, ${figures.writes} API writes in 30 s (${written}); probe ${probe.attempts} attempts, ${probe.failures.length} failures`);
    expect(await snapshot()).toBe(before);
    // The record, once per order, at its own path: its only write.
    for (const name of ORDERS) {
      const order = await fx.order(name);
      expect([name, order.status?.backupPath]).toEqual([name, `openstack/keystone/${CP_NS}/${childPrefix({ namespace: NS, name })}/${order.metadata.uid}/service-accounts/application-credential`]);
    }
    expect(figures).toEqual({ calls: 0, writes: ORDERS.length });
    expect(metricSum(metrics, 'keystone_appcred_api_writes_total', { kind: 'KeystoneApplicationCredential', verb: 'patchStatus' })).toBe(ORDERS.length);
    expect(metricSum(metrics, 'keystone_appcred_reconcile_total')).toBeGreaterThan(0);
    expect(probe.failures).toEqual([]);
  });

  it('deletes the orders under the new release: nothing left in Keystone; the install removed', async () => {
    await probe.stop();
    await kubectl(['delete', 'keystoneapplicationcredential', 'graced', 'steady', '-n', NS, '--wait=true', '--timeout=120s']);
    await eventually(async () => (await fx.userCredentials('')).length === 0 || undefined, 60_000);
    await next.server.stop(10_000);
    await kubectl(['delete', '-f', join(REPO, 'deploy', 'kustomize', 'base', 'operator.yaml'), '--ignore-not-found', '--wait=false']);
    await eventually(async () => (await kubectl(['get', 'namespace', SYSTEM])).code !== 0 || undefined, 120_000, 1000);
  });
});
