// @needs keystone openbao kube
/**
 * The fakes held to the real components (issue 46), so that a green simulation (test/sim/) means what it says: one call
 * sequence each, run through the project's own clients on the real component and on its fake, must give the same
 * transcript (status codes, error classes, the fields the code reads; ids, names and times as placeholders):
 * Keystone (test/support/conformance/keystone.ts against test/support/fake-keystone/), OpenBao's KV v2
 * (conformance/openbao.ts against test/support/fake-openbao.ts), and the API server's semantics the runtime relies on
 * (conformance/api-server.ts against test/unit/kube/fake-api-server.ts: resourceVersion conflicts, watches, bookmarks,
 * 410 Gone, the status subresource, finalizers, server-side apply's field ownership).
 */
import { LOCKED_SETUP_MS, lockCluster } from '../support/cluster-lock';
import { apiServerTranscript } from '../support/conformance/api-server';
import { keystoneTranscript, type KeystoneSubject } from '../support/conformance/keystone';
import { openBaoTranscript } from '../support/conformance/openbao';
import type { Transcript } from '../support/conformance/transcript';
import { FakeKeystoneServer } from '../support/fake-keystone/server';
import { FakeOpenBaoServer } from '../support/fake-openbao';
import { keystoneTestEnv, uniqueName } from '../support/keystone-fixtures';
import { adminTransport } from '../support/kube-transport';
import { installCrds } from '../support/operator';
import { FakeApiServer } from '../unit/kube/fake-api-server';

/** Prints what was compared, so a run's log shows the suite's reach (with KAC_CONFORMANCE_DUMP=1, every step's answer). */
const report = (component: string, transcript: Transcript) => {
  process.stderr.write(`[fakes-conformance] ${component}: ${transcript.length} steps, the fake's answers equal the real one's\n`);
  if (process.env.KAC_CONFORMANCE_DUMP) for (const [step, answer] of transcript) process.stderr.write(`  ${step}: ${JSON.stringify(answer)}\n`);
};

describe('the fakes answer as the real components do', () => {
  it('Keystone: tokens, users, projects, grants, application credentials', async () => {
    const env = keystoneTestEnv();
    const names = { project: uniqueName('conf-proj'), user: uniqueName('conf-user'), other: uniqueName('conf-other') };
    const real: KeystoneSubject = { authUrl: env.authUrl, admin: { user: env.adminUser, password: env.adminPassword, project: env.adminProject }, names };
    const fake = new FakeKeystoneServer();
    const admin = fake.addUser('admin', 'fake-admin-password-1');
    fake.grant(admin, fake.addProject('admin'), 'admin');
    const faked: KeystoneSubject = { authUrl: 'http://keystone.fake:5000/v3', admin: { user: 'admin', password: 'fake-admin-password-1', project: 'admin' }, names, fetch: fake.fetch };
    const expected = await keystoneTranscript(real);
    expect(await keystoneTranscript(faked)).toEqual(expected);
    report('Keystone', expected);
  }, 120_000);

  it("OpenBao: KV v2 documents, their owner's metadata, check-and-set, removal, refusals", async () => {
    const path = `keystone/conformance/${uniqueName('path')}/service-accounts/application-credential`;
    const mount = process.env.KAC_BAO_KV_MOUNT || 'openstack';
    const expected = await openBaoTranscript({ address: process.env.KAC_BAO_ADDR as string, token: process.env.KAC_BAO_TOKEN as string, mount, path });
    const fake = new FakeOpenBaoServer({ mounts: [mount] });
    fake.addToken('fake-root-token');
    expect(await openBaoTranscript({ address: 'http://openbao.fake:8200', token: 'fake-root-token', mount, path, fetch: fake.fetch })).toEqual(expected);
    report('OpenBao', expected);
  }, 60_000);

  describe('the API server', () => {
    let release: () => void = () => undefined;
    beforeAll(async () => {
      release = await lockCluster('fakes-conformance');
      await installCrds();
    }, LOCKED_SETUP_MS);
    afterAll(() => release());

    it('resourceVersion conflicts, generations, status, watches, bookmarks, 410 Gone, finalizers, field ownership', async () => {
      const namespace = uniqueName('kac-conformance');
      const expected = await apiServerTranscript({ transport: adminTransport(), namespace });
      const fake = new FakeApiServer();
      expect(await apiServerTranscript({ transport: fake, namespace, compact: () => fake.compact() })).toEqual(expected);
      report('API server', expected);
    }, 120_000);
  });
});
