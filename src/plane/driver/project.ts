/**
 * The KeystoneProject driver: observes the consent, the holds and the project in Keystone, runs `decideProject`'s
 * actions through the ports.
 */
import { PlaneDefaults, type KeystoneProject } from '../../api';
import { teardownPath } from '../consent';
import { holdOnProject } from '../holds';
import { teardownFinalizer, controlPlaneKey } from '../naming';
import { messageOf } from '../order-status';
import type { KeystoneAdmin, ObjectKey, OrderSite, PlaneDeps } from '../ports';
import { decideProject, projectNameOf, type ProjectAction, type ProjectObservations } from '../project';
import { adminOf, observeConsent, observeHolders, siteOf } from './observe';
import { planeSettled } from '../settled';
import { fingerprintOf, memoized } from './memo';
import { addFinalizer, runPass, type PassResult } from './run';

/** Reconciles one KeystoneProject. */
export async function reconcileProject(key: ObjectKey, deps: PlaneDeps, site: OrderSite = {}): Promise<PassResult> {
  const { orders, cluster } = siteOf(deps, site);
  const project = await orders.get('KeystoneProject', key);
  if (!project) return { steps: 0, actions: [] };
  let admin: KeystoneAdmin | undefined;

  const observe = async (order: KeystoneProject): Promise<ProjectObservations> => {
    const consent = await observeConsent(deps, order, cluster);
    const deleting = !!order.metadata.deletionTimestamp;
    const hold = deleting ? holdOnProject(order, await observeHolders(orders, key.namespace)) : undefined;
    const path = teardownPath(consent);
    const reach = deleting ? !hold && path.path === 'proceed' : consent.state === 'assigned' && !consent.wait;
    const base = { consent, ...(cluster ? { cluster } : {}) };
    if (!reach || !consent.controlPlane) return { ...base, ...(hold ? { hold } : {}) };
    try {
      admin = await adminOf(deps, consent.controlPlane);
      const domainId = await admin.domainId(consent.controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName);
      const found = domainId !== undefined ? await admin.findProject(projectNameOf(order), domainId) : undefined;
      return { ...base, keystone: { ...(domainId !== undefined ? { domainId } : {}), ...(found ? { project: found } : {}) } };
    } catch (error) {
      return { ...base, failure: messageOf(error) };
    }
  };

  const execute = async (order: KeystoneProject, _world: ProjectObservations, action: ProjectAction): Promise<KeystoneProject> => {
    const finalizer = teardownFinalizer('KeystoneProject');
    switch (action.type) {
      case 'add-finalizer':
        return addFinalizer(orders, 'KeystoneProject', key, order, finalizer);
      case 'create-project':
        await (admin as KeystoneAdmin).createProject({ name: action.name, domainId: action.domainId, description: action.description, tags: action.tags });
        return order;
      case 'delete-project':
        await (admin as KeystoneAdmin).deleteProject(action.id);
        return order;
      case 'release':
        await orders.removeFinalizer('KeystoneProject', key, finalizer);
        return order;
    }
  };

  const fingerprint = project.metadata.deletionTimestamp ? undefined : fingerprintOf([project, await deps.cluster.get('ControlPlane', controlPlaneKey(project))]);
  const pass = (): Promise<PassResult> =>
    runPass({
      kind: 'KeystoneProject',
      key,
      order: project,
      clock: deps.clock ?? (() => new Date()),
      observe,
      decide: decideProject,
      execute,
      failureOf: (world) => world.failure,
      withFailure: (world, action, error) => ({ ...world, failure: `${action.type}: ${messageOf(error)}` }),
      writeStatus: (status, basis) => orders.writeStatus('KeystoneProject', key, status, basis),
    });
  const settled = async () =>
    planeSettled(project, {
      consent: await observeConsent(deps, project, cluster),
      finalizer: teardownFinalizer('KeystoneProject'),
      ...(project.status?.projectID ? {} : { agrees: 'no project id recorded' }),
    });
  return memoized(deps, project.metadata.uid, fingerprint, pass, settled);
}
