/**
 * The KeystoneUser driver: observes the consent, the holds, the user in Keystone, the parked passwords (child Secrets
 * in the ControlPlane's namespace) and the delivered Secret, and runs `decideUser`'s actions through the ports.
 *
 * Within one pass it overlays its own writes on the cache's reads (a parked password, a delivered or withdrawn
 * Secret), so a lagging cache never makes a later step park or deliver again.
 */
import { randomBytes } from 'node:crypto';
import { PlaneDefaults, type ControlPlane, type KeystoneUser } from '../../api';
import { teardownPath } from '../consent';
import { ownedBy, userCloudOf, userSecretData, userSecretManifest } from '../delivery';
import { holdOnUser } from '../holds';
import { childLabels, deliveredSecretName, PASSWORD_KEY, passwordGenerationOf, passwordSecretName, teardownFinalizer, USER_SECRET_KEYS, controlPlaneKey, locationOf } from '../naming';
import { messageOf } from '../order-status';
import type { KeystoneAdmin, ObjectKey, OrderSite, PlaneDeps, SecretObject } from '../ports';
import { planeSettled } from '../settled';
import { decideUser, orderedGeneration, userNameOf, type UserAction, type UserDelivery, type UserObservations } from '../user';
import { adminOf, observeConsent, observeHolders, siteOf } from './observe';
import { fingerprintOf, memoized } from './memo';
import { addFinalizer, runPass, type PassResult } from './run';

const defaultPassword = (): string => randomBytes(32).toString('base64url');

/**
 * The parked password of a user's generation, for the KeystoneApplicationCredential's mint document (the password of
 * the user's `status.passwordGeneration`); undefined when it is not parked.
 */
export async function parkedPassword(deps: Pick<PlaneDeps, 'cluster'>, user: KeystoneUser, generation: number, cluster?: string): Promise<string | undefined> {
  const secret = await deps.cluster.getSecret({ namespace: controlPlaneKey(user).namespace, name: passwordSecretName(locationOf(user, cluster), generation) });
  const value = secret?.data[PASSWORD_KEY];
  return value ? value : undefined;
}

/** Reconciles one KeystoneUser. */
export async function reconcileUser(key: ObjectKey, deps: PlaneDeps, site: OrderSite = {}): Promise<PassResult> {
  const { orders, cluster } = siteOf(deps, site);
  const user = await orders.get('KeystoneUser', key);
  if (!user) return { steps: 0, actions: [] };
  const location = locationOf(user, cluster);
  const childNamespace = controlPlaneKey(user).namespace;
  const labels = childLabels('KeystoneUser', location);
  const deliveredName = deliveredSecretName(user.metadata.name);
  const newPassword = deps.newPassword ?? defaultPassword;
  // Pass-local overlay of this pass's own writes.
  const passwords = new Map<number, string>();
  const discarded = new Set<number>();
  let delivered: { state: 'written'; generation: number } | { state: 'withdrawn' } | undefined;
  let deliveredUid: string | undefined;
  let admin: KeystoneAdmin | undefined;
  let controlPlane: ControlPlane | undefined;

  const observeParked = async (): Promise<number[]> => {
    const children: readonly SecretObject[] = await deps.cluster.listSecrets(childNamespace, labels);
    for (const child of children) {
      const g = passwordGenerationOf(location, child.metadata.name);
      const value = child.data[PASSWORD_KEY];
      if (g !== undefined && value && !discarded.has(g) && !passwords.has(g)) passwords.set(g, value);
    }
    return [...passwords.keys()].filter((g) => !discarded.has(g)).sort((a, b) => a - b);
  };

  const observeDelivery = async (order: KeystoneUser): Promise<UserDelivery> => {
    if (delivered?.state === 'withdrawn') return { state: 'absent' };
    if (delivered?.state === 'written') return { state: 'owned', carries: delivered.generation };
    const secret = await orders.getSecret({ namespace: key.namespace, name: deliveredName });
    if (!secret) return { state: 'absent' };
    if (!ownedBy(secret, order.metadata.uid)) return { state: 'foreign' };
    deliveredUid = secret.metadata.uid;
    const cloud = controlPlane && userCloudOf(controlPlane, userNameOf(order), cluster);
    if (!cloud) return { state: 'owned' };
    for (const [g, password] of passwords) {
      const expected = userSecretData(cloud, password);
      if (!discarded.has(g) && USER_SECRET_KEYS.every((k) => secret.data[k] === expected[k])) return { state: 'owned', carries: g };
    }
    return { state: 'owned' };
  };

  const observe = async (order: KeystoneUser): Promise<UserObservations> => {
    const consent = await observeConsent(deps, order, cluster, orders.secretAccess?.(key.namespace));
    controlPlane = consent.controlPlane;
    const deleting = !!order.metadata.deletionTimestamp;
    const hold = deleting ? holdOnUser(order, await observeHolders(orders, key.namespace)) : undefined;
    const base = { consent, ...(hold ? { hold } : {}), ...(cluster ? { cluster } : {}) };
    let parked: number[];
    let delivery: UserDelivery;
    try {
      parked = await observeParked();
      delivery = await observeDelivery(order);
    } catch (error) {
      return { ...base, parked: [], delivery: { state: 'absent' }, failure: { where: 'delivery', message: messageOf(error) } };
    }
    const reach = deleting ? !hold && teardownPath(consent).path === 'proceed' : consent.state === 'assigned' && !consent.wait;
    if (!reach || !consent.controlPlane) return { ...base, parked, delivery };
    try {
      admin = await adminOf(deps, consent.controlPlane);
      const domainId = await admin.domainId(consent.controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName);
      const found = domainId !== undefined ? await admin.findUser(userNameOf(order), domainId) : undefined;
      return { ...base, parked, delivery, keystone: { ...(domainId !== undefined ? { domainId } : {}), ...(found ? { user: found } : {}) } };
    } catch (error) {
      return { ...base, parked, delivery, failure: { where: 'keystone', message: messageOf(error) } };
    }
  };

  const passwordOf = (generation: number): string => {
    const value = passwords.get(generation);
    if (value === undefined || discarded.has(generation)) throw new Error(`the password of generation ${generation} is not parked`);
    return value;
  };

  const execute = async (order: KeystoneUser, _world: UserObservations, action: UserAction): Promise<KeystoneUser> => {
    const finalizer = teardownFinalizer('KeystoneUser');
    switch (action.type) {
      case 'add-finalizer':
        return addFinalizer(orders, 'KeystoneUser', key, order, finalizer);
      case 'park': {
        const stored = await deps.cluster.createSecret({
          namespace: childNamespace,
          name: passwordSecretName(location, action.generation),
          labels,
          data: { [PASSWORD_KEY]: newPassword() },
        });
        const value = stored.data[PASSWORD_KEY];
        if (!value) throw new Error(`Secret ${childNamespace}/${stored.metadata.name} exists without a ${PASSWORD_KEY}`);
        passwords.set(action.generation, value);
        discarded.delete(action.generation);
        return order;
      }
      case 'create-user':
        await (admin as KeystoneAdmin).createUser({ name: action.name, domainId: action.domainId, password: passwordOf(action.generation), description: action.description });
        return order;
      case 'set-password':
        await (admin as KeystoneAdmin).setPassword(action.userId, passwordOf(action.generation));
        return order;
      case 'deliver': {
        const cloud = controlPlane && userCloudOf(controlPlane, userNameOf(order), cluster);
        if (!cloud) throw new Error('no auth URL to deliver');
        await orders.applySecret(userSecretManifest(order, cloud, passwordOf(action.generation)));
        delivered = { state: 'written', generation: action.generation };
        return order;
      }
      case 'discard':
        await deps.cluster.deleteSecret({ namespace: childNamespace, name: passwordSecretName(location, action.generation) });
        discarded.add(action.generation);
        return order;
      case 'delete-user':
        await (admin as KeystoneAdmin).deleteUser(action.id);
        return order;
      case 'withdraw':
        await orders.deleteSecret({ namespace: key.namespace, name: deliveredName }, deliveredUid ? { uid: deliveredUid } : undefined);
        delivered = { state: 'withdrawn' };
        return order;
      case 'release':
        await orders.removeFinalizer('KeystoneUser', key, finalizer);
        return order;
    }
  };

  const cachedControlPlane = await deps.cluster.get('ControlPlane', controlPlaneKey(user));
  const cachedChildren = [...(await deps.cluster.listSecrets(childNamespace, labels))].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const cachedDelivered = await orders.getSecret({ namespace: key.namespace, name: deliveredName });
  const fingerprint = user.metadata.deletionTimestamp ? undefined : fingerprintOf([user, cachedControlPlane, cachedChildren, cachedDelivered]);
  // Settled by the cache: the ordered generation is the recorded one, it alone is parked, and the Secret carries it.
  const settled = async () => {
    const generation = orderedGeneration(user);
    const parked = cachedChildren.map((c) => ({ generation: passwordGenerationOf(location, c.metadata.name), password: c.data[PASSWORD_KEY] }));
    const password = parked.length === 1 && parked[0].generation === generation ? parked[0].password : undefined;
    const cloud = cachedControlPlane && userCloudOf(cachedControlPlane, userNameOf(user), cluster);
    const expected = cloud && password ? userSecretData(cloud, password) : undefined;
    const carries = expected !== undefined && cachedDelivered !== undefined && ownedBy(cachedDelivered, user.metadata.uid) && USER_SECRET_KEYS.every((k) => cachedDelivered.data[k] === expected[k]);
    const agrees = user.status?.userID && user.status.passwordGeneration === generation && carries ? undefined : 'the parked password or the delivered Secret does not agree with the status';
    return planeSettled(user, { consent: await observeConsent(deps, user, cluster, orders.secretAccess?.(key.namespace)), finalizer: teardownFinalizer('KeystoneUser'), ...(agrees ? { agrees } : {}) });
  };
  const pass = (): Promise<PassResult> =>
    runPass({
      kind: 'KeystoneUser',
      key,
      order: user,
      clock: deps.clock ?? (() => new Date()),
      observe,
      decide: decideUser,
      execute,
      failureOf: (world) => world.failure?.message,
      withFailure: (world, action, error) => ({
        ...world,
        failure: { where: action.type === 'deliver' || action.type === 'withdraw' ? ('delivery' as const) : ('keystone' as const), message: `${action.type}: ${messageOf(error)}` },
      }),
      writeStatus: (status, basis) => orders.writeStatus('KeystoneUser', key, status, basis),
    });
  return memoized(deps, user.metadata.uid, fingerprint, pass, settled);
}
