/**
 * The invariants of the credentials in Keystone: none that a delivered Secret or a backup holds, or that a consumer may
 * still hold (its grace period since the Secret stopped carrying it has not ended), is deleted (teardown aside: the
 * tenant deleted the order); another installation's are never touched; at most two per order; and none outlives its
 * generation's sweep (nor its order's teardown).
 */
import type { Invariant } from '../model';
import { revoking } from './delivery';
import { ledgerOf } from './ledger';

/** How late a sweep may come after its deadline: the pass that the order's wake-up starts, with room for a probe. */
const SWEEP_SLACK_MS = 120_000;

export const held: Invariant = {
  name: 'held-credential-kept',
  description: 'no credential that a delivered Secret, a backup or a consumer holds is deleted before its grace ends',
  watch(world, report) {
    const ledger = ledgerOf(world);
    world.hooks.credentialDeleted.push((credential) => {
      const owner = ledger.orderOf(credential);
      if (!owner || ledger.foreign.has(credential.id)) return;
      const { order } = owner;
      const now = world.time.now();
      if (order.gone || order.deletingSince !== undefined) return; // the order's teardown: the tenant deleted it
      const stored = world.keystone.credentials.get(credential.id);
      // At its Keystone expiry it authenticates nobody any more (the operator rounds that instant down to the second): a
      // switch that came late (a crash, an outage) leaves the superseded credential less than its grace period.
      if (stored?.expiresAt !== undefined && stored.expiresAt.getTime() - 1000 <= now) return;
      const holder = ledger.heldNow(credential.id);
      if (holder) return report(`${order.key}: generation ${owner.generation} (${credential.name}) deleted while ${holder} holds it`);
      const last = ledger.lastCarried.get(credential.id);
      // Revoke now (issue 49) skips the grace period on purpose: revoke-after-successor judges that deletion.
      if (revoking(world, order, owner.generation)) return;
      const grace = last === undefined ? order.graceMs : Math.min(...ledger.gracesAt(order, last));
      if (last !== undefined && now < last + grace - 1000) {
        report(`${order.key}: generation ${owner.generation} deleted ${Math.round((now - last) / 1000)} s after the delivered Secret stopped carrying it, inside its grace period of ${grace / 1000} s (a consumer may still hold it)`);
      }
    });
    return {};
  },
};

export const foreignUntouched: Invariant = {
  name: 'foreign-untouched',
  description: "another installation's credentials under an order's names are never deleted",
  watch(world, report) {
    const ledger = ledgerOf(world);
    world.hooks.credentialDeleted.push((credential) => {
      if (ledger.foreign.has(credential.id)) report(`another installation's credential ${credential.name} was deleted`);
    });
    return {};
  },
};

export const atMostTwo: Invariant = {
  name: 'at-most-two-credentials',
  description: '≤ 2 credentials per order (plus foreign ones, never touched)',
  watch(world, report) {
    const ledger = ledgerOf(world);
    const reported = new Set<string>();
    return {
      check() {
        for (const order of ledger.orders.values()) {
          const own = ledger.credentialsOf(order);
          const key = `${order.key}/${own.map((c) => c.id).join(',')}`;
          if (own.length > 2 && !reported.has(key)) {
            reported.add(key);
            report(`${order.key} holds ${own.length} credentials in Keystone: generations ${own.map((c) => c.generation).join(', ')}`);
          }
        }
      },
    };
  },
};

export const swept: Invariant = {
  name: 'swept-in-time',
  description: "no credential outlives its generation's sweep (nor its order's teardown)",
  watch(world, report) {
    const ledger = ledgerOf(world);
    const reported = new Set<string>();
    const once = (id: string, message: string) => {
      if (reported.has(id)) return;
      reported.add(id);
      report(message);
    };
    return {
      check() {
        const now = world.time.now();
        for (const order of ledger.orders.values()) {
          const own = ledger.credentialsOf(order);
          if (order.gone) {
            for (const c of own) once(c.id, `${order.key} is gone (its teardown released it) and generation ${c.generation} is still in Keystone`);
            continue;
          }
          const carried = ledger.carrying.get(order.key);
          if (!carried || order.deletingSince !== undefined) continue;
          const delivered = own.find((c) => c.id === carried.id)?.generation;
          if (delivered === undefined) continue;
          for (const c of own) {
            if (c.id === carried.id || c.generation > delivered) continue;
            const switched = Math.max(ledger.lastCarried.get(c.id) ?? 0, carried.since);
            const deadline = switched + Math.max(...ledger.gracesAt(order, switched)) + SWEEP_SLACK_MS;
            // A sweep needs Keystone and the API server, a consenting namespace whose Secrets the operator may read, and a
            // leader: any fault since before the deadline, Keystone answering the operator too late (others' load queueing
            // its requests past their timeout), a frozen or refused namespace or a restart excuses the delay.
            const since = deadline - SWEEP_SLACK_MS;
            const frozen = world.frozenBetween(order.tenant, since, now) || world.refusedBetween(order.tenant, since, now);
            if (now <= deadline || world.faultedBetween(since, now) || frozen || world.restartedBetween(since, now) || world.timedOutBetween('keystone', since, now)) continue;
            once(c.id, `${order.key}: generation ${c.generation} is still in Keystone ${Math.round((now - deadline + SWEEP_SLACK_MS) / 1000)} s after its sweep was due (generation ${delivered} delivered)`);
          }
        }
      },
    };
  },
};
