/**
 * Property: the orders of one Keystone user, reconciled by several workers at once (each order's passes one after the
 * other, as its key is never with two workers, but the orders' passes interleaved at every port call in an order
 * fast-check's scheduler picks), each handed any earlier status or none and each dying at any step, keep every
 * guarantee of the single-order property (stale-status.property.test.ts): nothing the Secret or the backup carries is
 * ever deleted, the Secret carries a credential Keystone holds with that secret; and an order never deletes or carries
 * another order's credential, though they all list the same user's credentials. Once undisturbed, every order
 * converges on its own credential(s).
 */
import fc from 'fast-check';
import { FakeUser } from '../../support/fake-keystone';
import { pass, simulation } from '../../support/lifecycle-simulation';

describe('the orders of one user reconciled in parallel', () => {
  it.each([false, true])('each keeps its guarantees and converges on its own credentials (backup configured: %s)', async (withBackup) => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.array(pass, { minLength: 2, maxLength: 12 }), { minLength: 2, maxLength: 4 }), async (s, orders) => {
        const user = new FakeUser();
        const step = () => s.schedule(Promise.resolve());
        const sims = orders.map((_, i) => simulation({ withBackup, prefix: `order${i}-0000cafe-applicationcredential`, user, step }));
        // One worker per order: an order's passes in sequence, the orders side by side.
        const workers = Promise.all(
          sims.map(async (sim, i) => {
            for (const p of orders[i]) await sim.run(p);
          }),
        );
        await s.waitFor(workers);
        const finals = await s.waitFor(Promise.all(sims.map(async (sim) => ({ sim, final: await sim.settle() }))));
        for (const { sim, final } of finals) {
          const carried = sim.delivery.data?.application_credential_id;
          expect(carried).toBe(final.credentialID);
          expect(sim.keystone.authenticates(carried, sim.delivery.data?.application_credential_secret)).toBe(true);
          // Its own credential(s) only: the delivered one, and a superseded one inside its grace period.
          expect(sim.own().map((c) => c.id).sort()).toEqual([final.credentialID, final.previousCredentialID].filter((id): id is string => id !== undefined).sort());
        }
        // Every credential of the user belongs to an order.
        expect(user.credentials.size).toBe(finals.reduce((n, { sim }) => n + sim.own().length, 0));
      }),
      { numRuns: 50, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) },
    );
  });
});
