/**
 * Ownership (src/lifecycle/ownership.ts, issue 32): a credential under the order's names is the order's own only where
 * the order can prove it minted it (owner, proof, record); every other one is foreign: never deleted, adopted,
 * rotated away or counted as a generation; the order reports it and mints under a name that does not collide.
 */
import { alternateCredentialName, credentialName, resolveSpec, type KeystoneApplicationCredentialStatus } from '../../../src/api';
import {
  decide,
  describeCredential,
  markOf,
  owns,
  proofOf,
  reconcile,
  shownCredentialId,
  sortCredentials,
  type Action,
  type ActionEvent,
  type LifecycleOrder,
  type OwnershipEvidence,
  type Ports,
} from '../../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../../src/local';
import { FakeKeystone, FakeUser } from '../../support/fake-keystone';
import { T0, condition, held, kinds, liveStatus, mintOf, order, world } from './builders';

const PREFIX = 'app-1234abcd-applicationcredential';

describe('the marks', () => {
  it('a proof is a one-way digest of the secret: 43 base64url characters, the same for the same secret, never the secret', () => {
    const secret = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC1z';
    expect(proofOf(secret)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(proofOf(secret)).toBe(proofOf(secret));
    expect(proofOf(`${secret}x`)).not.toBe(proofOf(secret));
    expect(proofOf(secret)).not.toContain(secret.slice(0, 12));
  });

  it('a description carries what the credential is for, then the marks; marks are read back; an old description has none', () => {
    const text = describeCredential('managed by keystone-appcred for KeystoneApplicationCredential tenant-a/app', { owner: '6b1d-uid', proof: 'abc_-DEF' });
    expect(text).toBe('managed by keystone-appcred for KeystoneApplicationCredential tenant-a/app; owner=6b1d-uid; proof=abc_-DEF');
    expect(markOf(text)).toEqual({ owner: '6b1d-uid', proof: 'abc_-DEF' });
    expect(markOf('managed by keystone-appcred')).toEqual({});
    expect(markOf(undefined)).toEqual({});
    expect(markOf('proof=only')).toEqual({ proof: 'only' });
    expect(markOf('someone wrote owner=x y')).toEqual({});
  });

  it('owns by record, by owner and by proof; by nothing else (a name proves nothing)', () => {
    const evidence: OwnershipEvidence = { owner: 'ours', proofs: new Map([[2, 'p2']]), recorded: new Set(['rec']) };
    expect(owns(evidence, { generation: 1, id: 'rec', mark: {} })).toBe(true);
    expect(owns(evidence, { generation: 1, id: 'x', mark: { owner: 'ours' } })).toBe(true);
    expect(owns(evidence, { generation: 2, id: 'y', mark: { owner: 'theirs', proof: 'p2' } })).toBe(true);
    expect(owns(evidence, { generation: 3, id: 'z', mark: { proof: 'p2' } })).toBe(false); // the proof of another generation
    expect(owns(evidence, { generation: 1, id: 'w', mark: { owner: 'theirs' } })).toBe(false);
    expect(owns(evidence, { generation: 1, id: 'v', mark: {} })).toBe(false);
    expect(owns({ proofs: new Map(), recorded: new Set() }, { generation: 1, id: 'u', mark: {} })).toBe(false);
  });

  it('two of the order\'s own at one generation: the recorded one counts, the other is reported, never deleted on a guess', () => {
    const evidence: OwnershipEvidence = { owner: 'ours', proofs: new Map(), recorded: new Set(['b']) };
    const listed = [
      { generation: 1, id: 'a', name: `${PREFIX}-credential-v1`, mark: { owner: 'ours' } },
      { generation: 1, id: 'b', name: `${PREFIX}-credential-v1-0a0b0c0d`, mark: {} },
      { generation: 2, id: 'c', name: `${PREFIX}-credential-v2`, mark: { owner: 'theirs' }, userId: 'u1' },
    ];
    const { own, foreign } = sortCredentials(listed, evidence);
    expect(own.map((c) => c.id)).toEqual(['b']);
    expect(foreign).toEqual([
      { generation: 1, id: 'a', name: `${PREFIX}-credential-v1`, owner: 'ours' },
      { generation: 2, id: 'c', name: `${PREFIX}-credential-v2`, userId: 'u1', owner: 'theirs' },
    ]);
  });
});

describe('decide with foreign credentials under the order\'s names', () => {
  const foreignOne = { generation: 1, id: 'theirs-1', name: credentialName(PREFIX, 1), userId: 'user-1' };

  it('mints under the alternate name of its owner when a foreign credential holds the deterministic one, and reports it', () => {
    const plan = decide(order({}, {}, { owner: 'uid-a' }), world([], { foreign: [foreignOne] }), T0);
    expect(kinds(plan)).toEqual(['park:1', 'mint:1']);
    expect(mintOf(plan)?.name).toBe(alternateCredentialName(PREFIX, 1, 'uid-a'));
    expect(alternateCredentialName(PREFIX, 1, 'uid-a')).toMatch(new RegExp(`^${PREFIX}-credential-v1-[0-9a-f]{8}$`));
    expect(alternateCredentialName(PREFIX, 1, 'uid-b')).not.toBe(alternateCredentialName(PREFIX, 1, 'uid-a'));
  });

  it('the deterministic name while it is free, whatever foreign credentials hold other generations', () => {
    const plan = decide(order({}, {}, { owner: 'uid-a' }), world([], { foreign: [{ ...foreignOne, generation: 4, name: credentialName(PREFIX, 4) }] }), T0);
    expect(mintOf(plan)?.name).toBe(credentialName(PREFIX, 1));
  });

  it('refuses clearly when every name it may take is held (no owner id for an alternate name): False/ForeignCredential naming the credential and the user', () => {
    const plan = decide(order(), world([], { foreign: [foreignOne] }), T0);
    expect(plan.actions).toEqual([]);
    const c = condition(plan, 'CredentialReady');
    expect(c).toMatchObject({ status: 'False', reason: 'ForeignCredential' });
    expect(c?.message).toContain('theirs-1');
    expect(c?.message).toContain('user-1');
    expect(c?.message).toContain('openstack application credential delete theirs-1');
    expect(condition(plan, 'Ready')?.status).toBe('False');
  });

  it('beside its own delivered credential: CredentialReady stays True with reason ForeignCredential, Ready stays True', () => {
    const plan = decide(order(liveStatus(2, T0), {}, { owner: 'uid-a' }), world([held(2)], { foreign: [foreignOne] }), T0);
    expect(plan.actions).toEqual([]);
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'True', reason: 'ForeignCredential' });
    expect(condition(plan, 'CredentialReady')?.message).toMatch(/^generation 2 exists in Keystone; credential theirs-1 .* was not minted by it and is left alone/);
    expect(condition(plan, 'Ready')).toMatchObject({ status: 'True', reason: 'AllReady' });
  });

  it('without foreign credentials: CredentialMinted as the spec has it', () => {
    const plan = decide(order(liveStatus(2, T0), {}, { owner: 'uid-a' }), world([held(2)]), T0);
    expect(condition(plan, 'CredentialReady')).toMatchObject({ status: 'True', reason: 'CredentialMinted' });
  });
});

/** One installation of an order over a Keystone user it may share with others (the fakes of test/support). */
function installation(user: FakeUser, clock: () => Date, owner: string | undefined, prefix = PREFIX, parked: Iterable<[number, string]> = []) {
  const keystone = new FakeKeystone(prefix, clock, user);
  const secrets = new MemorySecretStore(parked);
  const delivery = new MemoryDelivery();
  let status: KeystoneApplicationCredentialStatus = {};
  const ports: Ports = {
    keystone,
    secrets,
    delivery,
    render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
    writeStatus: async (s) => void (status = s),
    release: async () => undefined,
    isTerminal: () => false,
  };
  const spec = resolveSpec({ rotation: { interval: '1h', gracePeriod: '10m' } });
  const orderOf = (extra: Partial<LifecycleOrder> = {}): LifecycleOrder => ({ prefix, ...(owner !== undefined ? { owner } : {}), spec, status, secretName: 'app-credentials', ...extra });
  return {
    keystone,
    secrets,
    delivery,
    get status() {
      return status;
    },
    set status(s: KeystoneApplicationCredentialStatus) {
      status = s;
    },
    pass: (extra: Partial<LifecycleOrder> = {}, onAction?: (e: ActionEvent) => void) => reconcile(orderOf(extra), ports, { clock, ...(onAction ? { onAction } : {}) }),
    /** The delivered credential works: Keystone holds its id with the delivered secret, unexpired. */
    works: () => keystone.authenticates(delivery.data?.application_credential_id, delivery.data?.application_credential_secret),
  };
}

describe('two installations ordering the same names for one Keystone user', () => {
  it('each mints, rotates, sweeps and tears down only its own; the other\'s delivered credential works at every step', async () => {
    let now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const user = new FakeUser();
    const a = installation(user, clock, 'uid-a');
    const b = installation(user, clock, 'uid-b');
    const step = async (who: ReturnType<typeof installation>, extra: Partial<LifecycleOrder> = {}) => {
      const result = await who.pass(extra);
      expect(a.works()).toBe(true);
      expect(b.works() || b.delivery.data === undefined).toBe(true);
      return result;
    };
    await step(a);
    const first = await step(b);
    expect(first.foreign.map((f) => f.id)).toEqual([a.status.credentialID]);
    expect(b.status.credentialID).not.toBe(a.status.credentialID);
    expect(user.credentials.get(b.status.credentialID as string)?.name).toBe(alternateCredentialName(PREFIX, 1, 'uid-b'));
    // Both rotate on their schedules and sweep after their grace periods, interleaved, for five hours.
    for (let i = 0; i < 30; i++) {
      now = new Date(now.getTime() + 10 * 60_000);
      await step(i % 2 === 0 ? a : b);
      await step(i % 2 === 0 ? b : a);
    }
    expect(a.status.credentialGeneration).toBeGreaterThanOrEqual(5);
    expect(b.status.credentialGeneration).toBeGreaterThanOrEqual(5);
    const mine = (who: ReturnType<typeof installation>) => [...user.credentials.values()].filter((c) => c.description?.includes(`owner=${who === a ? 'uid-a' : 'uid-b'}`));
    expect(mine(a).length).toBeLessThanOrEqual(2);
    expect(mine(b).length).toBeLessThanOrEqual(2);
    // A generation raised to the other's current one is minted beside it, under the alternate name.
    await step(b, { spec: resolveSpec({ credentialGeneration: (a.status.credentialGeneration as number) + 1, rotation: { interval: '1h', gracePeriod: '10m' } }) });
    // Teardown of one leaves the other's credentials whole.
    const aIds = mine(a).map((c) => c.id);
    const torn = await b.pass({ deleting: true });
    expect(torn.released).toBe(true);
    expect(mine(b)).toEqual([]);
    for (const id of aIds) expect(user.credentials.has(id)).toBe(true);
    expect(a.works()).toBe(true);
  });

  it('a credential minted before marks stays the order\'s own while its status records it; an unrecorded unmarked one is left alone', async () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const user = new FakeUser();
    const a = installation(user, clock, 'uid-a');
    await a.pass();
    // As an earlier build left it: no marks in the description.
    const live = user.credentials.get(a.status.credentialID as string);
    if (live) live.description = 'managed by keystone-appcred';
    const stray = { id: 'unrecorded', name: credentialName(PREFIX, 7), secret: 's', description: 'managed by keystone-appcred' };
    user.credentials.set(stray.id, stray);
    const result = await a.pass({ spec: resolveSpec({ credentialGeneration: 2, rotation: { interval: '1h', gracePeriod: '10m' } }) });
    expect(result.status.credentialGeneration).toBe(2); // the unrecorded generation 7 is not counted: the raised 2, not 8
    expect(result.status.previousCredentialID).toBe(live?.id); // the recorded one is superseded, in grace, as ever
    expect(user.credentials.has('unrecorded')).toBe(true);
    expect(result.foreign.map((f) => f.id)).toEqual(['unrecorded']);
    const torn = await a.pass({ deleting: true });
    expect(torn.released).toBe(true);
    expect([...user.credentials.keys()]).toEqual(['unrecorded']);
  });

  it('a successor whose parked secret is lost is the order\'s by its owner mark: deleted and minted again, as before marks', async () => {
    let now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const user = new FakeUser();
    const a = installation(user, clock, 'uid-a');
    await a.pass();
    now = new Date(now.getTime() + 60 * 60_000);
    a.keystone.fault = (call) => {
      if (call === 'create-after') throw new Error('crash after the create');
    };
    await expect(a.pass()).rejects.toThrow('crash after the create');
    a.keystone.fault = () => undefined;
    await a.secrets.discard(2);
    await a.pass();
    expect(a.status.credentialGeneration).toBe(2);
    expect(a.works()).toBe(true);
    expect(user.credentials.size).toBe(2); // generation 2 (re-minted) and generation 1 in grace
  });
});

describe('the delivered Secret is a hint (issue 39): a tenant may edit it', () => {
  const forge = (who: ReturnType<typeof installation>, id: string) => {
    who.delivery.data = { ...(who.delivery.data as NonNullable<typeof who.delivery.data>), application_credential_id: id };
  };

  it("another installation's id written into the Secret (the secret left as is) is repaired and reported, never recorded; its credential is never deleted while the order rotates and sweeps", async () => {
    let now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const user = new FakeUser();
    const b = installation(user, clock, 'uid-b');
    const a = installation(user, clock, 'uid-a');
    await b.pass();
    await a.pass();
    const theirs = b.status.credentialID as string;
    // The tenant of A's namespace lists the user's credentials (a restricted credential may) and writes B's id.
    forge(a, theirs);
    const actions: Action[] = [];
    const repaired = await a.pass({}, (e) => void actions.push(e.action));
    const deliver = actions.find((x) => x.type === 'deliver');
    expect(deliver).toMatchObject({ type: 'deliver', generation: 1, credentialId: a.status.credentialID, unowned: theirs });
    expect(deliver?.why).toContain(`it named credential ${shownCredentialId(theirs)}, which is not this order's`);
    expect(repaired.status.credentialID).not.toBe(theirs);
    expect(repaired.status.previousCredentialID).toBeUndefined();
    expect(a.delivery.data?.application_credential_id).toBe(a.status.credentialID);
    expect(repaired.foreign.map((f) => f.id)).toEqual([theirs]);
    // Hours of both orders' rotations and sweeps, the tenant writing B's current id into A's Secret now and then: B's
    // credentials work throughout, and A deletes none of them.
    const bIds = new Set([theirs]);
    for (let i = 0; i < 24; i++) {
      now = new Date(now.getTime() + 10 * 60_000);
      await b.pass();
      bIds.add(b.status.credentialID as string);
      if (i % 5 === 0) forge(a, b.status.credentialID as string);
      await a.pass();
      expect(b.works()).toBe(true);
      expect(a.works()).toBe(true);
      for (const id of bIds) expect([a.status.credentialID, a.status.previousCredentialID]).not.toContain(id);
    }
    expect(a.status.credentialGeneration).toBeGreaterThanOrEqual(3);
    expect(a.keystone.writes.filter((w) => w.startsWith('delete ')).length).toBeGreaterThanOrEqual(2); // A swept its own
    for (const id of bIds) expect(a.keystone.writes).not.toContain(`delete ${id}`);
  });

  it("shows a tenant's value only when it has Keystone's id form: the delivered secret written into the id field is never printed", async () => {
    expect(shownCredentialId('3c91d5a0e4b14f0f9d2c7a8b6e5f4d3c')).toBe('3c91d5a0e4b14f0f9d2c7a8b6e5f4d3c');
    expect(shownCredentialId('id-7')).toBe('<a value of 4 characters that is not a Keystone id, not shown>');
    const now = new Date('2026-12-01T00:00:00Z');
    const a = installation(new FakeUser(), () => now, 'uid-a');
    await a.pass();
    const secret = a.delivery.data?.application_credential_secret as string;
    forge(a, secret); // the id and the secret swapped by hand
    const actions: Action[] = [];
    await a.pass({}, (e) => void actions.push(e.action));
    const deliver = actions.find((x) => x.type === 'deliver');
    expect(deliver?.why).toBe(`Secret repaired: it named credential <a value of ${secret.length} characters that is not a Keystone id, not shown>, which is not this order's`);
    expect(deliver?.why).not.toContain(secret);
    expect(a.delivery.data?.application_credential_id).toBe(a.status.credentialID);
  });

  it('an unmarked credential of somebody else (an installation on an earlier build) written into the Secret is not counted either: the Secret is no evidence, and no parked secret of its generation proves it', async () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const user = new FakeUser();
    const a = installation(user, () => now, 'uid-a');
    await a.pass();
    user.credentials.set('old-build', { id: 'old-build', name: credentialName(PREFIX, 2), secret: 'their-secret', description: 'managed by keystone-appcred' });
    forge(a, 'old-build');
    const actions: Action[] = [];
    const result = await a.pass({}, (e) => void actions.push(e.action));
    expect(actions.find((x) => x.type === 'deliver')).toMatchObject({ unowned: 'old-build' });
    expect(result.foreign.map((f) => f.id)).toEqual(['old-build']);
    expect(result.status.credentialGeneration).toBe(1);
    expect(user.credentials.has('old-build')).toBe(true);
  });

  it('a restored cluster whose credential was minted before marks (status lost) keeps it: the Secret pairs its id with a parked secret, and Keystone authenticates the pair', async () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const user = new FakeUser();
    const a = installation(user, () => now, 'uid-a');
    await a.pass();
    const live = user.credentials.get(a.status.credentialID as string);
    if (live) live.description = 'managed by keystone-appcred'; // as an earlier build minted it
    // The restore: a new uid, no status; the parked secrets and the delivered Secret came back with the backup.
    const restored = installation(user, () => now, 'uid-restored', PREFIX, a.secrets.entries());
    restored.delivery.data = { ...(a.delivery.data as NonNullable<typeof a.delivery.data>) };
    const before = user.credentials.size;
    const result = await restored.pass();
    expect(result.foreign).toEqual([]);
    expect(result.status.credentialID).toBe(live?.id);
    expect(result.status.credentialGeneration).toBe(1);
    expect(user.credentials.size).toBe(before); // nothing minted beside it
    expect(restored.works()).toBe(true);
  });

  it('when Keystone cannot check an unmarked credential of a parked generation, nothing is counted, minted or deleted this pass; the Secret is still repaired', async () => {
    const now = new Date('2026-12-01T00:00:00Z');
    const user = new FakeUser();
    const a = installation(user, () => now, 'uid-a');
    await a.pass();
    const live = user.credentials.get(a.status.credentialID as string);
    if (live) live.description = 'managed by keystone-appcred';
    await a.secrets.park(2); // as a crash of an earlier build after its park left it
    user.credentials.set('old-build', { id: 'old-build', name: credentialName(PREFIX, 2), secret: 'their-secret', description: 'managed by keystone-appcred' });
    forge(a, 'old-build');
    a.keystone.fault = (call) => {
      if (call === 'verify') throw new Error('503 Service Unavailable');
    };
    const writes = a.keystone.writes.length;
    await expect(a.pass()).rejects.toThrow("Keystone: checking whether credential old-build (generation 2, without marks) was minted with the order's parked secret: 503 Service Unavailable");
    expect(a.keystone.writes.length).toBe(writes);
    expect(a.delivery.data?.application_credential_id).toBe(live?.id);
    expect(condition({ status: a.status, actions: [] }, 'CredentialReady')).toMatchObject({ status: 'False', reason: 'CredentialError' });
  });
});


describe("0.1.0's successor, minted and parked but not switched at the upgrade (issue 46, finding 3)", () => {
  /** An order as 0.1.0 left it: generation 1 delivered, generation 2 minted with its parked secret, neither marked. */
  async function upgraded() {
    let now = new Date('2026-12-01T00:00:00Z');
    const clock = () => now;
    const user = new FakeUser();
    const a = installation(user, clock, 'uid-a');
    await a.pass();
    const live = user.credentials.get(a.status.credentialID as string);
    if (live) live.description = 'managed by keystone-appcred'; // 0.1.0 minted without marks
    // 0.1.0's rotation: generation 2 parked and minted, its backup refused, so never switched to.
    await a.secrets.park(2);
    const secret = (await a.secrets.read(2)) as string;
    user.credentials.set('v2-of-0.1.0', { id: 'v2-of-0.1.0', name: credentialName(PREFIX, 2), secret, description: 'managed by keystone-appcred' });
    now = new Date(now.getTime() + 60_000);
    return { a, user, live, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
  }

  it('is the order\'s own: Keystone authenticates it with the parked secret of its generation, so it is switched to, never minted again, never reported foreign', async () => {
    const { a, user, live } = await upgraded();
    const creates = a.keystone.writes.filter((w) => w.startsWith('create ')).length;
    const result = await a.pass();
    expect(result.foreign).toEqual([]);
    expect(result.status.credentialGeneration).toBe(2);
    expect(result.status.credentialID).toBe('v2-of-0.1.0');
    expect(result.status.previousCredentialID).toBe(live?.id);
    expect(a.keystone.writes.filter((w) => w.startsWith('create ')).length).toBe(creates);
    expect(condition({ status: result.status, actions: [] }, 'CredentialReady')).toMatchObject({ status: 'True', reason: 'CredentialMinted' });
    expect(a.works()).toBe(true);
    expect(user.credentials.size).toBe(2);
  });

  it('an unmarked credential of a parked generation that Keystone does not authenticate with that secret stays foreign; one Keystone cannot check holds the pass', async () => {
    const { a, user } = await upgraded();
    (user.credentials.get('v2-of-0.1.0') as { secret: string }).secret = 'another installation minted it';
    const result = await a.pass();
    expect(result.foreign.map((f) => f.id)).toEqual(['v2-of-0.1.0']);
    expect(user.credentials.has('v2-of-0.1.0')).toBe(true);
    a.keystone.fault = (call) => {
      if (call === 'verify') throw new Error('503 Service Unavailable');
    };
    const writes = a.keystone.writes.length;
    await expect(a.pass()).rejects.toThrow("Keystone: checking whether credential v2-of-0.1.0 (generation 2, without marks) was minted with the order's parked secret: 503 Service Unavailable");
    expect(a.keystone.writes.length).toBe(writes);
  });
});
