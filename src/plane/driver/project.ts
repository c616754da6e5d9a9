/**
 * The KeystoneProject driver: observes the consent, the holds and the project in Keystone, runs `decideProject`'s
 * actions through the ports.
 */
import { PlaneDefaults, type KeystoneProject } from '../../api';
import { controlPlaneKey, teardownPath } from '../consent';
import { holdOnProject } from '../holds';
import { teardownFinalizer } from '../naming';
import { messageOf } from '../order-status';
import type { KeystoneAdmin, ObjectKey, PlaneDeps } from '../ports';
import { decideProject, projectNameOf, type ProjectAction, type ProjectObservations } from '../project';
import { adminOf, observeConsent, observeHolders } from './observe';
import { planeSettled } from '../settled';
import { fingerprintOf, memoized } from './memo';
import { runPass, type PassResult } from './run';

/** Reconciles one KeystoneProject. */
export async function reconcileProject(key: ObjectKey, deps: PlaneDeps, options: { readonly cluster?: string } = {}): Promise<PassResult> {
  const project = await deps.cluster.get('KeystoneProject', key);
  if (!project) return { steps: 0, actions: [] };
  let admin: KeystoneAdmin | undefined;

  const observe = async (order: KeystoneProject): Promise<ProjectObservations> => {
    const consent = await observeConsent(deps, order, options.cluster);
    const deleting = !!order.metadata.deletionTimestamp;
    const hold = deleting ? holdOnProject(order, await observeHolders(deps, key.namespace)) : undefined;
    const path = teardownPath(consent);
    const reach = deleting ? !hold && path.path === 'proceed' : consent.state === 'assigned' && !consent.wait;
    if (!reach || !consent.controlPlane) return { consent, ...(hold ? { hold } : {}) };
    try {
      admin = await adminOf(deps, consent.controlPlane);
      const domainId = await admin.domainId(consent.controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName);
      const found = domainId !== undefined ? await admin.findProject(projectNameOf(order), domainId) : undefined;
      return { consent, keystone: { ...(domainId !== undefined ? { domainId } : {}), ...(found ? { project: found } : {}) } };
    } catch (error) {
      return { consent, failure: messageOf(error) };
    }
  };

  const execute = async (order: KeystoneProject, _world: ProjectObservations, action: ProjectAction): Promise<KeystoneProject> => {
    const finalizer = teardownFinalizer('KeystoneProject');
    switch (action.type) {
      case 'add-finalizer':
        await deps.cluster.addFinalizer('KeystoneProject', key, finalizer);
        return { ...order, metadata: { ...order.metadata, finalizers: [...(order.metadata.finalizers ?? []), finalizer] } };
      case 'create-project':
        await (admin as KeystoneAdmin).createProject({ name: action.name, domainId: action.domainId, description: action.description, tags: action.tags });
        return order;
      case 'delete-project':
        await (admin as KeystoneAdmin).deleteProject(action.id);
        return order;
      case 'release':
        await deps.cluster.removeFinalizer('KeystoneProject', key, finalizer);
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
      writeStatus: (status) => deps.cluster.writeStatus('KeystoneProject', key, status),
    });
  const settled = async () =>
    planeSettled(project, {
      consent: await observeConsent(deps, project, options.cluster),
      finalizer: teardownFinalizer('KeystoneProject'),
      ...(project.status?.projectID ? {} : { agrees: 'no project id recorded' }),
    });
  return memoized(deps, project.metadata.uid, fingerprint, pass, settled);
}
