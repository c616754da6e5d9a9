/**
 * The invariants of issue 49's delivery options (src/api/deletion-policy.ts, secret-template.ts, adoption.ts, the
 * revoke-previous annotation; src/lifecycle/teardown.ts, rotation.ts, adoption.ts):
 *
 * - `deletionPolicy: Retain` never deletes the delivered credential at the order's deletion, nor its Secret;
 * - a revoke deletes a previous credential only once the delivered Secret and the backup carry its successor;
 * - no delivered Secret holds keys of two generations (the template's formats and free keys among them);
 * - each revoke value fires at most once (one revoke generation per value, unless the status that recorded it was lost);
 * - a refused adoption never mints; one the order can prove delivers the adopted credential, minting none first.
 */
import { REVOKE_PREVIOUS_ANNOTATION } from '../../../src/api';
import type { Invariant } from '../model';
import { PATHS, unbase64, type Tenant } from '../objects';
import type { SimWorld } from '../sim-world';
import { ledgerOf, type KnownOrder } from './ledger';

const OPERATOR = 'keystone-appcred-operator';

type RevokeStatus = { lastRevokeRequest?: string; revokeGeneration?: number; credentialGeneration?: number; credentialID?: string };

const ref = (order: KnownOrder) => ({ tenant: order.tenant as Tenant, name: order.name });

/**
 * Whether a revoke request of the order is being carried out and revokes `generation` now: its annotation names a
 * value the status has not accepted yet, or one it accepted whose revoke generation lies above `generation`.
 */
export function revoking(world: SimWorld, order: KnownOrder, generation: number): boolean {
  const object = world.order(ref(order));
  const value = (object?.metadata.annotations as Record<string, string> | undefined)?.[REVOKE_PREVIOUS_ANNOTATION];
  if (!object || value === undefined) return false;
  const status = (object.status ?? {}) as RevokeStatus;
  return status.lastRevokeRequest !== value || (status.revokeGeneration !== undefined && generation < status.revokeGeneration);
}

export const retainKeepsDelivered: Invariant = {
  name: 'retain-keeps-delivered',
  description: 'deletionPolicy Retain never deletes the delivered credential at the order deletion, nor the delivered Secret',
  watch(world, report) {
    const ledger = ledgerOf(world);
    world.hooks.credentialDeleted.push((credential) => {
      const left = ledger.retained.get(credential.id);
      if (left) {
        // A new order of the same name is another order: what it does with a credential it finds is its own rules'.
        const now = world.order({ tenant: left.key.split('/')[0] as Tenant, name: left.key.split('/')[1] ?? '' });
        if (!now || now.metadata.uid === left.uid) report(`${left.key}: ${credential.name}, which its deletion under Retain left in Keystone, was deleted`);
        return;
      }
      const owner = ledger.orderOf(credential);
      if (!owner) return;
      const order = owner.order;
      if (!order.retain || (order.deletingSince === undefined && !order.gone)) return;
      if (ledger.carrying.get(order.key)?.id === credential.id) report(`${order.key}: its teardown under Retain deleted generation ${owner.generation} (${credential.name}), which its delivered Secret carries`);
    });
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.secrets || change.type !== 'DELETED' || !change.object.metadata.name.endsWith('-credentials')) return;
      const key = `${change.object.metadata.namespace ?? ''}/${change.object.metadata.name.slice(0, -'-credentials'.length)}`;
      const order = ledger.orders.get(key);
      if (!order?.retain || (order.deletingSince === undefined && !order.gone) || world.tenantDeletedSecret.get(key) === world.time.now()) return;
      const data = change.object.data as Record<string, string> | undefined;
      const id = data?.application_credential_id ? unbase64(data.application_credential_id) : undefined;
      const secret = data?.application_credential_secret ? unbase64(data.application_credential_secret) : undefined;
      if (id !== undefined && world.keystone.credentials.get(id)?.secret === secret) report(`${key}: its delivered Secret (carrying ${id}) was deleted by its deletion under Retain`);
    });
    return {};
  },
};

export const revokeAfterSuccessor: Invariant = {
  name: 'revoke-after-successor',
  description: 'a revoke deletes the previous credential only after the backup and the delivered Secret carry its successor',
  watch(world, report) {
    const ledger = ledgerOf(world);
    world.hooks.credentialDeleted.push((credential) => {
      const owner = ledger.orderOf(credential);
      if (!owner || ledger.foreign.has(credential.id)) return;
      const { order, generation } = owner;
      if (order.gone || order.deletingSince !== undefined || !revoking(world, order, generation)) return;
      const carried = ledger.carrying.get(order.key);
      if (carried?.id === credential.id) return; // held-credential-kept judges that one
      const successor = carried && ledger.credentialsOf(order).find((c) => c.id === carried.id);
      // A successor never delivered (one replaced before its switch) is no previous credential.
      if (successor && successor.generation < generation) return;
      if (!successor) return report(`${order.key}: a revoke deleted generation ${generation} while the delivered Secret carries ${carried ? `${carried.id}, none of the order's` : 'nothing'}`);
      const backup = ledger.backedUp(order);
      if (backup !== carried.id) report(`${order.key}: a revoke deleted generation ${generation} while the backup holds ${backup ?? 'nothing'}, not its successor ${carried.id} (generation ${successor.generation}) the Secret carries`);
    });
    return {};
  },
};

export const secretOneGeneration: Invariant = {
  name: 'secret-one-generation',
  description: 'no delivered Secret holds keys of two generations (the template formats and free keys among them)',
  watch(world, report) {
    // Every credential that ever was, with its secret: a key may still carry one Keystone deleted since.
    const ever = new Map<string, string>();
    world.hooks.credentialDeleted.push((c) => void ever.set(c.id, c.secret));
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.secrets || change.type === 'DELETED' || change.fieldManager !== OPERATOR || !change.object.metadata.name.endsWith('-credentials')) return;
      for (const c of world.keystone.credentials.values()) ever.set(c.id, c.secret);
      const data = Object.fromEntries(Object.entries((change.object.data as Record<string, string> | undefined) ?? {}).map(([k, v]) => [k, unbase64(v)]));
      const id = data.application_credential_id;
      const secret = data.application_credential_secret;
      const where = `the Secret ${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      if (id !== undefined && ever.has(id) && ever.get(id) !== secret) return report(`${where} carries the id of ${id} with another credential's secret`);
      for (const [key, value] of Object.entries(data)) {
        for (const [otherId, otherSecret] of ever) {
          if (otherId === id) continue;
          if (value.includes(otherId) || (otherSecret.length >= 12 && otherSecret !== secret && value.includes(otherSecret))) return report(`${where} carries ${id ?? 'no id'} and, in its key ${key}, credential ${otherId}`);
        }
      }
    });
    return {};
  },
};

export const revokeFiresOnce: Invariant = {
  name: 'revoke-fires-once',
  description: 'each revoke value fires at most once: it rotates to one delivered generation (one more only after a status that recorded it was lost)',
  watch(world, report) {
    const ledger = ledgerOf(world);
    // By `tenant/name value`: the generations minted for the request, those of them the Secret carried, and how often a
    // status that had recorded it was lost (a restore, an upgrade: each lets the value fire once more).
    const minted = new Map<string, Set<number>>();
    const delivered = new Map<string, Set<number>>();
    const lost = new Map<string, number>();
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.orders || change.type === 'DELETED' || change.fieldManager === OPERATOR) return;
      const before = (change.old?.status ?? {}) as RevokeStatus;
      const now = (change.object.status ?? {}) as RevokeStatus;
      if (before.lastRevokeRequest === undefined || now.lastRevokeRequest === before.lastRevokeRequest) return;
      const key = `${change.object.metadata.namespace ?? ''}/${change.object.metadata.name} ${before.lastRevokeRequest}`;
      lost.set(key, (lost.get(key) ?? 0) + 1);
    });
    world.hooks.line.push((line) => {
      const value = line.msg === 'action' && line.action === 'mint' && line.outcome === 'done' ? /^revoke requested \((.*)\)$/.exec(String(line.why))?.[1] : undefined;
      if (value === undefined) return;
      const key = `${String(line.key)} ${value}`;
      minted.set(key, (minted.get(key) ?? new Set<number>()).add(Number(line.generation)));
    });
    // Each time a delivered Secret changes (the ledger has noted what it carries): a generation minted for a request, delivered.
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.secrets || !change.object.metadata.name.endsWith('-credentials')) return;
      for (const [key, generations] of minted) {
        const order = ledger.orders.get(key.slice(0, key.indexOf(' ')));
        const carried = order && ledger.carrying.get(order.key);
        const generation = carried && ledger.credentialsOf(order).find((c) => c.id === carried.id)?.generation;
        if (generation === undefined || !generations.has(generation)) continue;
        const fired = (delivered.get(key) ?? new Set<number>()).add(generation);
        delivered.set(key, fired);
        if (fired.size === 2 + (lost.get(key) ?? 0)) report(`${key.replace(' ', ': the revoke request ')} fired ${fired.size} times (generations ${[...fired].join(', ')} delivered for it)`);
      }
    });
    return {};
  },
};

/** How soon after its delivery an adopted credential may be superseded with nothing asking for it: never this soon. */
const ADOPTED_KEPT_MS = 60_000;

export const adoptionMintsNothing: Invariant = {
  name: 'adoption-mints-nothing',
  description: 'a refused adoption never mints; one the order can prove delivers the adopted credential, minting none first and no successor unasked',
  watch(world, report) {
    const ledger = ledgerOf(world);
    const reported = new Set<string>();
    // When each adopted credential was first recorded delivered, by id.
    const deliveredAt = new Map<string, number>();
    world.hooks.change.push((change) => {
      if (change.collection !== PATHS.orders || change.fieldManager !== OPERATOR || change.type === 'DELETED') return;
      const key = `${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      const adoption = world.adoptions.get(key);
      const id = (change.object.status as RevokeStatus | undefined)?.credentialID;
      if (!adoption?.valid || id === undefined) return;
      const now = world.time.now();
      if (id === adoption.id) return void (deliveredAt.has(id) || deliveredAt.set(id, now));
      const since = deliveredAt.get(adoption.id);
      // A tenant's event (a raise, a revoke, a template) may ask for a rotation; nothing else does this soon.
      const asked = world.nextEventAfter(since ?? now);
      if (since === undefined || now - since >= ADOPTED_KEPT_MS || (asked !== undefined && asked <= now) || reported.has(key)) return;
      reported.add(key);
      report(`${key}: superseded the credential it adopted (${adoption.id}) ${Math.round((now - since) / 1000)} s after delivering it, with nothing asking for a rotation (now ${id})`);
    });
    return {
      check() {
        for (const [key, adoption] of world.adoptions) {
          const order = ledger.orders.get(key);
          const object = order && world.order(ref(order));
          const adopt = (object?.spec as { adopt?: { credentialID?: string } } | undefined)?.adopt;
          if (!order || !object || object.metadata.deletionTimestamp || adopt?.credentialID !== adoption.id || reported.has(key)) continue;
          const status = (object.status ?? {}) as RevokeStatus;
          const minted = ledger.credentialsOf(order).filter((c) => c.id !== adoption.id);
          const message = adoption.valid
            ? status.credentialGeneration === undefined && minted.length > 0
              ? `minted generation ${minted.map((c) => c.generation).join(', ')} before it delivered the credential it adopts (${adoption.id})`
              : status.credentialGeneration !== undefined && ledger.firstDelivered(order) !== adoption.id
                ? `delivered ${ledger.firstDelivered(order) ?? 'a credential'} first, not the one it adopts (${adoption.id})`
                : undefined
            : minted.length > 0 || status.credentialGeneration !== undefined
              ? `its adoption of ${adoption.id} must be refused, and it minted or adopted (generations ${minted.map((c) => c.generation).join(', ') || 'none in Keystone'}, status generation ${status.credentialGeneration ?? 'none'})`
              : undefined;
          if (message === undefined) continue;
          reported.add(key);
          report(`${key}: ${message}`);
        }
      },
    };
  },
};
