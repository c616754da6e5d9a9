/**
 * One order's lifecycle on fakes, for the property tests (test/unit/lifecycle/*.property.test.ts): a pass may be handed
 * the current status, one from any earlier pass, or none (a restored cluster, a lost write, a crash after an action),
 * and may die at its n-th port call. After each pass it checks what must hold whatever happened: nothing the delivered
 * Secret or the backup carries was deleted in Keystone (one they carried before a switch only once it has expired), the Secret carries a credential Keystone holds with
 * that secret, a wake-up is never in the past, a recorded Secret carries the recorded credential.
 *
 * With `foreign`, credentials another installation minted under the same names sit in Keystone from the start: none of
 * them is ever deleted or delivered (src/lifecycle/ownership.ts).
 *
 * Several simulations may share one Keystone user (a {@link FakeUser}), as orders of one user do, and a `step` hook
 * awaited before every port call lets a scheduler interleave their passes, as several workers run them.
 */
import fc from 'fast-check';
import { resolveSpec, type KeystoneApplicationCredentialStatus } from '../../src/api';
import { reconcile, type Ports } from '../../src/lifecycle';
import { MemoryDelivery, MemorySecretStore } from '../../src/local';
import { FakeKeystone, FakeUser } from './fake-keystone';

export const SPEC = resolveSpec({ rotation: { interval: '1m', gracePeriod: '20s' } });

export class Crash extends Error {}

export interface Pass {
  /** Milliseconds the clock moves before the pass. */
  readonly advance: number;
  /** Which status the pass is handed. */
  readonly handed: 'current' | 'earlier' | 'none';
  readonly earlier: number;
  /** The pass dies at its n-th port call, if set. */
  readonly crashAt: number | undefined;
  /**
   * With a tenant (`SimulationOptions.tenant`): before the pass, the tenant writes the id of the foreign credential of
   * this index (modulo their number) into the delivered Secret's `application_credential_id`, the secret left as is.
   */
  readonly forge?: number | undefined;
}

export const pass: fc.Arbitrary<Pass> = fc.record({
  advance: fc.integer({ min: 500, max: 30_000 }),
  handed: fc.constantFrom('current', 'current', 'earlier', 'none'),
  earlier: fc.nat(),
  crashAt: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
});

/** A pass for a simulation with a tenant: now and then the tenant forges the delivered Secret's id first. */
export const tenantPass: fc.Arbitrary<Pass> = fc.record({
  advance: fc.integer({ min: 500, max: 30_000 }),
  handed: fc.constantFrom('current', 'current', 'earlier', 'none'),
  earlier: fc.nat(),
  crashAt: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
  forge: fc.option(fc.nat(), { nil: undefined, freq: 3 }),
});

export interface SimulationOptions {
  readonly withBackup: boolean;
  /** The order's child prefix (its credentials' names). @default one fixed prefix */
  readonly prefix?: string;
  /** The Keystone user the order's credentials belong to, shared with other orders. @default a user of its own */
  readonly user?: FakeUser;
  /** Awaited before every port call (a scheduler interleaving several orders' passes). @default none */
  readonly step?: () => Promise<void>;
  /** The order's owner id (src/lifecycle/ownership.ts). @default none: its credentials are proven by proof and record */
  readonly owner?: string;
  /**
   * Credentials under the order's names that another installation minted (or that carry no mark and no record),
   * already in Keystone before the first pass: never deleted, adopted or counted. @default none
   */
  readonly foreign?: readonly { readonly name: string; readonly description?: string }[];
  /**
   * A tenant who may edit the delivered Secret (and list the user's credentials): passes with `forge` write a foreign
   * credential's id into it first. The id is never counted, adopted or deleted; a pass that completes repairs the
   * Secret and reports the id (a `deliver` action naming it as `unowned`). @default false
   */
  readonly tenant?: boolean;
}

export type Simulation = ReturnType<typeof simulation>;

export function simulation(options: SimulationOptions) {
  const prefix = options.prefix ?? 'prop-0000cafe-applicationcredential';
  const step = options.step ?? (async () => undefined);
  let now = new Date('2026-12-01T00:00:00Z');
  const clock = () => now;
  const keystone = new FakeKeystone(prefix, clock, options.user);
  const foreignIds = new Set<string>();
  for (const f of options.foreign ?? []) {
    const id = `foreign-${foreignIds.size + 1}`;
    keystone.credentials.set(id, { id, name: f.name, secret: `their-secret-${id}`, ...(f.description !== undefined ? { description: f.description } : {}) });
    foreignIds.add(id);
  }
  const secrets = new MemorySecretStore();
  const delivery = new MemoryDelivery();
  const backup: { id?: string } = {};
  let status: KeystoneApplicationCredentialStatus = {};
  const history: KeystoneApplicationCredentialStatus[] = [{}];
  let calls = 0;
  let crashAt: number | undefined;
  /** The foreign id the tenant wrote into the Secret, until the order writes it again. */
  let forged: string | undefined;
  const tick = () => {
    calls++;
    if (crashAt !== undefined && calls === crashAt) throw new Crash('simulated crash');
  };
  keystone.fault = (call) => {
    if (call !== 'list' && call !== 'verify') tick(); // a crash in a read is one before it
  };
  const gated =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await step();
      return call(...args);
    };
  const ports: Ports = {
    keystone: {
      list: gated(() => keystone.list()),
      create: gated((r) => keystone.create(r)),
      delete: gated((id) => keystone.delete(id)),
      verify: gated((id, secret) => keystone.verify(id, secret)),
    },
    secrets: {
      list: gated(() => secrets.list()),
      park: gated((g) => secrets.park(g)),
      read: gated((g) => secrets.read(g)),
      recordFailure: gated((g, m) => secrets.recordFailure(g, m)),
      discard: gated((g) => secrets.discard(g)),
    },
    delivery: {
      read: gated(() => delivery.read()),
      write: gated(async (d) => (tick(), (forged = undefined), delivery.write(d))),
      remove: gated(async () => ((forged = undefined), delivery.remove())),
    },
    ...(options.withBackup
      ? {
          backup: {
            read: gated(async () => backup.id),
            write: gated(async (d) => (tick(), void (backup.id = d.application_credential_id))),
            remove: gated(async () => void delete backup.id),
          },
        }
      : {}),
    render: (id, secret) => ({ 'clouds.yaml': `id=${id}`, application_credential_id: id, application_credential_secret: secret }),
    writeStatus: gated(async (s) => {
      tick();
      status = s;
      history.push(s);
    }),
    release: async () => undefined,
    isTerminal: () => false,
  };
  /** Credential ids the Secret and the backup carry now. */
  const carried = () => [delivery.data?.application_credential_id, backup.id].filter((id): id is string => id !== undefined);
  const input = (handed: KeystoneApplicationCredentialStatus) => ({ prefix, ...(options.owner !== undefined ? { owner: options.owner } : {}), spec: SPEC, status: handed, secretName: 'prop-credentials' });

  return {
    prefix,
    keystone,
    delivery,
    /** This order's credentials in Keystone (the user's others and the foreign ones under its names excluded). */
    own: () => [...keystone.credentials.values()].filter((c) => c.name.startsWith(`${prefix}-`) && !foreignIds.has(c.id)),
    foreignIds,
    async run(p: Pass) {
      now = new Date(now.getTime() + p.advance);
      const handed = p.handed === 'current' ? status : p.handed === 'none' ? {} : (history[p.earlier % history.length] as KeystoneApplicationCredentialStatus);
      const foreign = [...foreignIds];
      if (options.tenant && p.forge !== undefined && delivery.data && foreign.length > 0) {
        forged = foreign[p.forge % foreign.length] as string;
        delivery.data = { ...delivery.data, application_credential_id: forged };
      }
      const reported: string[] = [];
      const before = carried();
      const expiries = new Map([...keystone.credentials.values()].map((c) => [c.id, c.expiresAt]));
      calls = 0;
      crashAt = p.crashAt;
      let result: Awaited<ReturnType<typeof reconcile>> | undefined;
      try {
        result = await reconcile(input(handed), ports, { clock, onAction: (e) => e.action.type === 'deliver' && e.action.unowned !== undefined && void reported.push(e.action.unowned) });
      } catch (error) {
        if (!(error instanceof Crash) && !((error as { cause?: unknown }).cause instanceof Crash)) throw error;
      }
      crashAt = undefined;
      // Nothing the Secret or the backup carries now was deleted in Keystone, nor anything they carried when the pass
      // began, unless Keystone already rejected it: a superseded credential swept at its own expiry (a late rotation)
      // gives no consumer anything. Its deadline is the expiry rounded down to the second (metav1.Time).
      for (const id of carried()) expect(keystone.credentials.has(id)).toBe(true);
      for (const id of before) {
        const expiresAt = expiries.get(id);
        if (!keystone.credentials.has(id)) expect(expiresAt !== undefined && expiresAt.getTime() < now.getTime() + 1000).toBe(true);
      }
      // A credential the order did not mint is never deleted, and never delivered. A foreign id the tenant wrote is
      // gone from the Secret once a pass completes, and that pass reported it; a pass that died may not have got there.
      for (const id of foreignIds) expect(keystone.credentials.has(id)).toBe(true);
      if (result) expect(forged).toBeUndefined();
      if (result && before.some((id) => foreignIds.has(id))) expect(reported).toEqual(before.filter((id) => foreignIds.has(id)));
      if (delivery.data && forged === undefined) expect(foreignIds.has(delivery.data.application_credential_id)).toBe(false);
      // What the Secret carries is the credential Keystone holds under that id, with that secret.
      if (delivery.data && forged === undefined) expect(keystone.credentials.get(delivery.data.application_credential_id)?.secret).toBe(delivery.data.application_credential_secret);
      if (result) {
        if (result.wakeAt) expect(result.wakeAt.getTime()).toBeGreaterThan(now.getTime());
        if (result.status.secretName !== undefined) expect(delivery.data?.application_credential_id).toBe(result.status.credentialID);
      }
    },
    /** Runs undisturbed past any grace period; returns the final status. */
    async settle() {
      let last: KeystoneApplicationCredentialStatus = status;
      for (let i = 0; i < 4; i++) {
        now = new Date(now.getTime() + 21_000);
        last = (await reconcile(input(status), ports, { clock })).status;
      }
      return last;
    },
  };
}
