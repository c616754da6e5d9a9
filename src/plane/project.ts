/**
 * The KeystoneProject's rules (identity-plane.md, KeystoneProject; Shared behaviour), as a pure `decide`: the project of
 * `projectName` in the ControlPlane's domain, created with the order's ownership tag, reported as a collision when a
 * project of that name exists without it, and deleted with the order unless another order still holds it.
 */
import { PlaneConditionType, type KeystoneProject, type KeystoneProjectStatus } from '../api';
import { PlaneDefaults } from '../api';
import { needsFinalizer, teardownPath, type Consent } from './consent';
import type { Hold } from './holds';
import { carriesMarker, locationOf, ownerMarker, ownedDescription, teardownFinalizer } from './naming';
import { allFalse, observed, override } from './order-status';
import { RECHECK_MS, type FinalizerAction, type PlanePlan } from './plan';
import type { KeystoneRecord } from './ports';
import { report } from './conditions';
import { ProjectReason } from './reasons';

/** An action of a KeystoneProject. */
export type ProjectAction =
  | FinalizerAction
  | { readonly type: 'create-project'; readonly name: string; readonly domainId: string; readonly description: string; readonly tags: readonly string[]; readonly why: string }
  | { readonly type: 'delete-project'; readonly id: string; readonly why: string };

/** What one pass observed. */
export interface ProjectObservations {
  readonly consent: Consent;
  /** What holds the order's deletion (observed while it is being deleted). */
  readonly hold?: Hold;
  /** Keystone, observed as the admin when the consent lets the order reach it. */
  readonly keystone?: {
    /** The id of `adminCredential.domainName`; undefined: no such domain. */
    readonly domainId?: string;
    /** The project of `projectName` in that domain. */
    readonly project?: KeystoneRecord;
  };
  /** The cluster the order lives on. @default the management cluster */
  readonly cluster?: string;
  /** Observing or acting failed: reported as ProjectFailed, retried. */
  readonly failure?: string;
}

const TYPES = [PlaneConditionType.ProjectReady] as const;
type Plan = PlanePlan<KeystoneProjectStatus, ProjectAction>;

/** The project name an order asks for: `spec.projectName`, else `metadata.name`. */
export function projectNameOf(project: KeystoneProject): string {
  return project.spec.projectName || project.metadata.name;
}

/** Decides the next step of a KeystoneProject. */
export function decideProject(project: KeystoneProject, world: ProjectObservations, now: Date): Plan {
  const status = observed(project.status, project.metadata.generation);
  if (project.metadata.deletionTimestamp) return teardown(project, status, world, now);
  const { consent } = world;
  if (consent.state === 'refused') return { status: allFalse(status, TYPES, consent.reason, consent.message, now), actions: [] };
  const actions: ProjectAction[] = [];
  const finalizer = teardownFinalizer('KeystoneProject');
  if (needsFinalizer(consent, project.metadata, finalizer)) actions.push({ type: 'add-finalizer', why: 'the namespace is assigned' });
  if (consent.wait) return { status: allFalse(status, TYPES, consent.wait.reason, consent.wait.message, now), actions };
  if (world.failure !== undefined) return failed(status, world.failure, now, actions);
  const domainName = consent.controlPlane.spec.adminCredential.domainName || PlaneDefaults.domainName;
  const name = projectNameOf(project);
  const keystone = world.keystone;
  if (!keystone) return failed(status, 'Keystone was not observed', now, actions);
  if (keystone.domainId === undefined) return failed(status, `domain ${domainName} (adminCredential.domainName) does not exist in Keystone`, now, actions);
  const uid = project.metadata.uid ?? '';
  const found = keystone.project;
  if (!found) {
    actions.push({
      type: 'create-project',
      name,
      domainId: keystone.domainId,
      description: ownedDescription('KeystoneProject', locationOf(project, world.cluster), uid),
      tags: [ownerMarker(uid)],
      why: `no project ${name} in domain ${domainName}`,
    });
    return { status, actions };
  }
  if (!carriesMarker(uid, { tags: found.tags ?? [] })) {
    const rest: KeystoneProjectStatus = { ...status };
    delete (rest as { projectID?: string }).projectID;
    delete (rest as { projectName?: string }).projectName;
    delete (rest as { domainName?: string }).domainName;
    const message = `a project ${name} (id ${found.id}) exists in domain ${domainName} that this order did not create (no tag ${ownerMarker(uid)}); it is never adopted or deleted`;
    return { status: { ...rest, conditions: report(rest.conditions, [[TYPES[0], { status: 'False', reason: ProjectReason.ProjectCollision, message }]], now, status.observedGeneration) }, actions, requeueAfter: RECHECK_MS };
  }
  const provisioned = { ...status, projectID: found.id, projectName: found.name, domainName };
  const message = `project ${found.name} (id ${found.id}) exists in domain ${domainName}`;
  return { status: { ...provisioned, conditions: report(status.conditions, [[TYPES[0], { status: 'True', reason: ProjectReason.ProjectProvisioned, message }]], now, status.observedGeneration) }, actions };
}

function failed(status: KeystoneProjectStatus, message: string, now: Date, actions: ProjectAction[]): Plan {
  return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: ProjectReason.ProjectFailed, message }, now), actions, requeueAfter: RECHECK_MS };
}

/** Deletion: wait while held, then delete the project if this order created it, then release. */
function teardown(project: KeystoneProject, status: KeystoneProjectStatus, world: ProjectObservations, now: Date): Plan {
  if (!(project.metadata.finalizers ?? []).includes(teardownFinalizer('KeystoneProject'))) return { status, actions: [] };
  if (world.hold) return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: world.hold.reason, message: world.hold.message }, now), actions: [], requeueAfter: RECHECK_MS };
  const path = teardownPath(world.consent);
  if (path.path === 'release') return { status, actions: [{ type: 'release', why: 'the ControlPlane is gone: nothing is left to reach Keystone with' }] };
  if (path.path === 'wait') return { status: override(status, TYPES, TYPES[0], { status: 'False', reason: path.wait.reason, message: `deletion waits: ${path.wait.message}` }, now), actions: [] };
  if (world.failure !== undefined) return failed(status, world.failure, now, []);
  const found = world.keystone?.project;
  const actions: ProjectAction[] = [];
  if (found && carriesMarker(project.metadata.uid ?? '', { tags: found.tags ?? [] })) actions.push({ type: 'delete-project', id: found.id, why: 'teardown' });
  actions.push({ type: 'release', why: found && actions.length > 0 ? 'the project is deleted' : 'this order created no project that exists' });
  return { status, actions };
}
