/**
 * The KeystoneRoleAssignment driver: observes the consent, the holds, the referenced user and project orders, the
 * namespace's other assignments, the role and the grant in Keystone, and runs `decideAssignment`'s actions.
 */
import type { KeystoneRoleAssignment } from '../../api';
import { teardownPath } from '../consent';
import { holdOnAssignment } from '../holds';
import { teardownFinalizer, controlPlaneKey } from '../naming';
import { assignmentSelector } from '../references';
import { messageOf } from '../order-status';
import type { KeystoneAdmin, ObjectKey, OrderSite, PlaneDeps } from '../ports';
import { decideAssignment, type AssignmentAction, type AssignmentObservations } from '../role-assignment';
import { adminOf, observeConsent, siteOf } from './observe';
import { planeSettled } from '../settled';
import { fingerprintOf, memoized } from './memo';
import { addFinalizer, runPass, type PassResult } from './run';

/** Reconciles one KeystoneRoleAssignment. */
export async function reconcileAssignment(key: ObjectKey, deps: PlaneDeps, site: OrderSite = {}): Promise<PassResult> {
  const { orders, cluster } = siteOf(deps, site);
  const assignment = await orders.get('KeystoneRoleAssignment', key);
  if (!assignment) return { steps: 0, actions: [] };
  let admin: KeystoneAdmin | undefined;

  const observe = async (order: KeystoneRoleAssignment): Promise<AssignmentObservations> => {
    const consent = await observeConsent(deps, order, cluster);
    const deleting = !!order.metadata.deletionTimestamp;
    const [user, project, peers, credentials] = await Promise.all([
      orders.get('KeystoneUser', { namespace: key.namespace, name: order.spec.userRef.name }),
      orders.get('KeystoneProject', { namespace: key.namespace, name: order.spec.projectRef.name }),
      orders.list('KeystoneRoleAssignment', key.namespace, assignmentSelector(order.spec.userRef.name, order.spec.projectRef.name)),
      deleting ? orders.list('KeystoneApplicationCredential', key.namespace) : Promise.resolve([]),
    ]);
    const hold = deleting ? holdOnAssignment(order, { credentials }) : undefined;
    const base = { consent, peers, ...(hold ? { hold } : {}), ...(user ? { user } : {}), ...(project ? { project } : {}) };
    const reach = deleting ? !hold && teardownPath(consent).path === 'proceed' : consent.state === 'assigned' && !consent.wait;
    const userId = user?.status?.userID;
    const projectId = project?.status?.projectID;
    // Keystone is asked only when there is something to ask about: a grant to make or check, or a teardown.
    if (!reach || !consent.controlPlane || (!deleting && !(userId && projectId))) return base;
    try {
      admin = await adminOf(deps, consent.controlPlane);
      const role = await admin.findRole(order.spec.role);
      const granted = role && userId && projectId ? await admin.hasRole({ roleId: role.id, userId, projectId }) : false;
      return { ...base, keystone: { ...(role ? { role } : {}), granted } };
    } catch (error) {
      return { ...base, failure: messageOf(error) };
    }
  };

  const execute = async (order: KeystoneRoleAssignment, _world: AssignmentObservations, action: AssignmentAction): Promise<KeystoneRoleAssignment> => {
    const finalizer = teardownFinalizer('KeystoneRoleAssignment');
    switch (action.type) {
      case 'add-finalizer':
        return addFinalizer(orders, 'KeystoneRoleAssignment', key, order, finalizer);
      case 'grant':
        await (admin as KeystoneAdmin).grantRole(action.grant);
        return order;
      case 'revoke':
        await (admin as KeystoneAdmin).revokeRole(action.grant);
        return order;
      case 'release':
        await orders.removeFinalizer('KeystoneRoleAssignment', key, finalizer);
        return order;
    }
  };

  const fingerprint = assignment.metadata.deletionTimestamp
    ? undefined
    : fingerprintOf([
        assignment,
        await deps.cluster.get('ControlPlane', controlPlaneKey(assignment)),
        await orders.get('KeystoneUser', { namespace: key.namespace, name: assignment.spec.userRef.name }),
        await orders.get('KeystoneProject', { namespace: key.namespace, name: assignment.spec.projectRef.name }),
        [...(await orders.list('KeystoneRoleAssignment', key.namespace, assignmentSelector(assignment.spec.userRef.name, assignment.spec.projectRef.name)))].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1)),
      ]);
  const pass = (): Promise<PassResult> =>
    runPass({
      kind: 'KeystoneRoleAssignment',
      key,
      order: assignment,
      clock: deps.clock ?? (() => new Date()),
      observe,
      decide: decideAssignment,
      execute,
      failureOf: (world) => world.failure,
      withFailure: (world, action, error) => ({ ...world, failure: `${action.type}: ${messageOf(error)}` }),
      writeStatus: (status, basis) => orders.writeStatus('KeystoneRoleAssignment', key, status, basis),
    });
  const settled = async () => {
    const [user, project] = await Promise.all([
      orders.get('KeystoneUser', { namespace: key.namespace, name: assignment.spec.userRef.name }),
      orders.get('KeystoneProject', { namespace: key.namespace, name: assignment.spec.projectRef.name }),
    ]);
    const status = assignment.status;
    const agrees = status?.roleID && status.userID && status.userID === user?.status?.userID && status.projectID && status.projectID === project?.status?.projectID ? undefined : 'the user or project it grants on is not the one recorded';
    return planeSettled(assignment, { consent: await observeConsent(deps, assignment, cluster), finalizer: teardownFinalizer('KeystoneRoleAssignment'), ...(agrees ? { agrees } : {}) });
  };
  return memoized(deps, assignment.metadata.uid, fingerprint, pass, settled);
}
