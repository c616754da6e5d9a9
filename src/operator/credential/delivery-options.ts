/**
 * What issue 49 adds to a pass of the KeystoneApplicationCredential reconciler, in one place: the delivered Secret's
 * template (the fields a template may name, as the identity plane holds them, and the ports that render it:
 * src/lifecycle/secret-template.ts), the Secret an adoption reads the secret from, the revoke request the order's
 * annotation makes, and the Events that say what `deletionPolicy: Retain`, revoke now and an adoption did. Those Events
 * are also printed in the operator's log (`logged`), the Retain one with the commands that remove what it left.
 */
import {
  DEFAULT_ADOPT_SECRET_KEY,
  EventReason,
  PlaneDefaults,
  REVOKE_PREVIOUS_ANNOTATION,
  SECRET_KEYS,
  revokeRequestOf,
  eventOf,
  secretName,
  type ControlPlane,
  type KeystoneApplicationCredential,
  type KeystoneProject,
  type KeystoneUser,
  type ReasonedEvent,
  type TemplateFields,
} from '../../api';
import type { Ports } from '../../lifecycle/ports';
import type { ActionEvent } from '../../lifecycle/runner';
import { templateData, templateMetadata } from '../../lifecycle/secret-template';
import { deliveredSecretName } from '../../plane/naming';
import type { ClusterPort } from '../../plane/ports';

/**
 * An Event about an order, of the table of every Event reason (src/api/events.ts; never a secret in `note`); `logged`:
 * also printed in the operator's log.
 */
export type CredentialEvent = ReasonedEvent & { readonly logged?: boolean };

/** What the template's fields are read from. */
export interface TemplateSources {
  readonly controlPlane?: ControlPlane;
  readonly user?: KeystoneUser;
  readonly project?: KeystoneProject;
  /** Where the delivered document points (src/plane/gates.ts): absent when nothing can be delivered. */
  readonly document?: { readonly authUrl: string; readonly regionName: string; readonly interface: string };
}

/** The fields a template may name, but the credential's id and secret, as the identity plane holds them. */
export function templateFields(sources: TemplateSources): TemplateFields {
  const { controlPlane, user, project, document } = sources;
  const domain = project?.status?.domainName ?? controlPlane?.spec.adminCredential.domainName ?? PlaneDefaults.domainName;
  const projectName = project?.status?.projectName ?? project?.spec.projectName ?? project?.metadata.name;
  return {
    ...(document ? { authURL: document.authUrl, region: document.regionName, interface: document.interface } : {}),
    ...(user?.status?.userID ? { userID: user.status.userID } : {}),
    ...(project?.status?.projectID ? { projectID: project.status.projectID } : {}),
    ...(projectName ? { projectName } : {}),
    projectDomainName: domain,
  };
}

/** The ports that render the order's template, and the keys its Secret carries (`status.secretKeys`). */
export function templatePorts(order: KeystoneApplicationCredential, fields: TemplateFields): Pick<Ports, 'template' | 'secretMetadata'> & { readonly secretKeys: readonly string[] } {
  const template = order.spec.secretTemplate;
  const withCredential = (id: string, secret: string): TemplateFields => ({ ...fields, applicationCredentialID: id, applicationCredentialSecret: secret });
  let keys: string[] = [];
  try {
    keys = Object.keys(templateData(template, withCredential('id', 'secret')));
  } catch {
    // A template that cannot be rendered here delivers none of its keys; the failed write says why.
  }
  return {
    template: (document) => templateData(template, withCredential(document.application_credential_id, document.application_credential_secret)),
    secretMetadata: templateMetadata(template),
    secretKeys: [...SECRET_KEYS, ...keys],
  };
}

/**
 * The secret of the credential `spec.adopt` names, read from the API server (not the cache, which holds a tenant's
 * Secrets as metadata only): the Secret in the order's namespace, on the order's cluster, at its key.
 */
export function adoptionOf(orders: ClusterPort, order: KeystoneApplicationCredential): Ports['adoption'] {
  const ref = order.spec.adopt?.secretRef;
  if (ref === undefined) return undefined;
  return async () => {
    const key = { namespace: order.metadata.namespace ?? '', name: ref.name };
    const where = `Secret ${key.namespace}/${key.name}`;
    const secret = await orders.readSecret(key);
    if (secret === undefined) return { refused: `${where}, which spec.adopt names, does not exist` };
    const field = ref.key ?? DEFAULT_ADOPT_SECRET_KEY;
    const value = secret.data[field];
    return value ? { secret: value } : { refused: `${where} has no key ${field} (spec.adopt.secretRef.key)` };
  };
}

/** The revoke request of the order's `c5c3.io/revoke-previous` annotation, if it makes one. */
export function revokeRequestOfOrder(order: KeystoneApplicationCredential): string | undefined {
  return revokeRequestOf(order.metadata.annotations?.[REVOKE_PREVIOUS_ANNOTATION]);
}

/** What a Retain teardown's Event names besides the action: where the backup is, whose the credential is. */
export interface RetainContext {
  /** The order's cluster, when it is not the management cluster. */
  readonly cluster?: string;
  /** The backing path (`<mount>/<path>`) of the order's backup, when there is one. */
  readonly backupPath?: string;
  /** The ordered user's and project's Keystone ids. */
  readonly userId?: string;
  readonly projectId?: string;
}

/**
 * The Event of an action issue 49 added, if it has one: `Retained` (what a Retain teardown left, and the commands that
 * remove it), `GraceSkipped` (a Warning: a revoke request deleted the superseded credential at once), `Adopted`.
 */
export function deliveryOptionEvent(order: KeystoneApplicationCredential, e: ActionEvent, context: RetainContext): CredentialEvent | undefined {
  const a = e.action;
  if (e.outcome !== 'done') return undefined;
  const namespace = order.metadata.namespace ?? '';
  const on = context.cluster ? ` on cluster ${context.cluster}` : '';
  if (a.type === 'retain') {
    const secret = `${namespace}/${secretName(order.metadata.name)}`;
    const backup = a.backup && context.backupPath ? context.backupPath : undefined;
    const userSecret = `${namespace}/${deliveredSecretName(order.spec.userRef.name)}`;
    const left = `application credential ${a.id} (generation ${a.generation}) in Keystone${context.userId ? ` (user ${context.userId})` : ''}, the Secret ${secret}${on} (owner reference removed)${backup ? ` and its backup at ${backup}` : ''}`;
    const commands = [
      `openstack application credential delete ${a.id} as its user (the clouds.yaml of Secret ${userSecret}${context.projectId ? `, --os-project-id ${context.projectId}` : ''})`,
      `kubectl delete secret -n ${namespace} ${secretName(order.metadata.name)}${context.cluster ? ` --context ${context.cluster}` : ''}`,
      ...(backup ? [`bao kv metadata delete -mount=${backup.slice(0, backup.indexOf('/'))} ${backup.slice(backup.indexOf('/') + 1)}`] : []),
    ];
    return { ...eventOf(EventReason.Retained, `deletionPolicy Retain: left ${left}; remove them later with: ${commands.join('; ')}`), logged: true };
  }
  if (a.type === 'delete' && a.why.startsWith('revoke requested')) {
    const note =
      `deleted generation ${a.generation} (application credential ${a.id}) at once, its grace period of ${order.spec.rotation?.gracePeriod ?? '24h'} skipped: ` +
      `${a.why.replace(/: grace period skipped$/, '')} by the ${REVOKE_PREVIOUS_ANNOTATION} annotation; the Secret and the backup carried its successor first`;
    return { ...eventOf(EventReason.GraceSkipped, note), logged: true };
  }
  if (a.type === 'adopt') {
    return { ...eventOf(EventReason.Adopted, `adopted application credential ${a.credentialId} as generation ${a.generation} instead of minting; the next rotation supersedes it`), logged: true };
  }
  return undefined;
}
