/**
 * The KeystoneClusterIdentity's admission (issue 11, after terraformclusteridentity.md, Validation): a
 * ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`) and its binding, evaluated in the API server, so there is
 * no webhook to keep available. It checks what the CRD's rules cannot:
 *
 * - **create and update:** the requesting user must be allowed to `get` the Secret `spec.secretRef` names, so an identity
 *   cannot expose a Secret its author cannot read. On update only when `spec.secretRef` or `spec.allowedNamespaces`
 *   changed (the first chooses a Secret, the second where it is copied); a label-only change is not checked. Status
 *   writes go to the `status` subresource, which the policy does not match.
 * - **delete:** refused while `status.namespaces` lists a namespace, with a message listing them.
 *
 * The delete check reads the status the operator keeps rather than listing ControlPlanes (a policy cannot list). The API
 * server evaluates delete admission against the stored object inside its optimistic delete and re-evaluates it when the
 * object changed in between, so a namespace the operator records is never missed. The race it leaves is the operator's
 * own order: it records a namespace only after the mirror exists, and removes a namespace only after deleting its
 * mirror. A delete admitted between a mirror's creation and its recording removes an identity whose mirror the
 * operator then finds orphaned: the ControlPlane's next pass reports `IdentityNotFound`, the operator deletes the mirror,
 * and the ControlPlane's orders wait; nothing in Keystone is touched and the source Secret stays. A ControlPlane that
 * names the identity but is not allowed (so holds no mirror) does not block the delete either, for the same reason.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { ClusterIdentityKind } from '../src/api/cluster-identity';
import { GROUP, VERSION } from '../src/api/types';
import { kubeObject } from './kube';

/** The name of the policy and of its binding. */
export const CLUSTER_IDENTITY_POLICY_NAME = `${ClusterIdentityKind.plural}.${GROUP}`;

/** True when the request must pass the Secret check: a create, or an update that changes what is shared or with whom. */
export const SECRET_CHECK_NEEDED =
  "request.operation == 'CREATE' || (request.operation == 'UPDATE' && (object.spec.secretRef != oldObject.spec.secretRef || " +
  'has(object.spec.allowedNamespaces) != has(oldObject.spec.allowedNamespaces) || ' +
  '(has(object.spec.allowedNamespaces) && object.spec.allowedNamespaces != oldObject.spec.allowedNamespaces)))';

/** The authorizer's answer: may the requesting user `get` the named Secret. */
export const SECRET_ACCESS =
  "authorizer.group('').resource('secrets').namespace(object.spec.secretRef.namespace).name(object.spec.secretRef.name).check('get').allowed()";

/** The refusal of a create or update, naming the user and the Secret as `namespace/name`. */
export const SECRET_ACCESS_MESSAGE =
  "'user \"' + request.userInfo.username + '\" may not get Secret ' + object.spec.secretRef.namespace + '/' + object.spec.secretRef.name + " +
  "': a KeystoneClusterIdentity may only name a Secret its author can read'";

/** True unless the request deletes an identity whose `status.namespaces` is not empty. */
export const NOT_MIRRORED = "request.operation != 'DELETE' || !has(oldObject.status) || !has(oldObject.status.namespaces) || size(oldObject.status.namespaces) == 0";

/** The refusal of a delete, listing the namespaces. */
export const STILL_MIRRORED_MESSAGE =
  "'KeystoneClusterIdentity ' + oldObject.metadata.name + ' is in use: its Secret is mirrored into namespaces ' + oldObject.status.namespaces.join(', ') + " +
  "'; stop using it there (ControlPlane spec.adminCredential.identityRef) or revoke them in spec.allowedNamespaces, and delete once status.namespaces is empty'";

/** Props of {@link ClusterIdentityAdmission}. */
export interface ClusterIdentityAdmissionProps {
  /** The policy's and binding's name. @default "keystoneclusteridentities.c5c3.io" */
  readonly name?: string;
}

/** The KeystoneClusterIdentity's ValidatingAdmissionPolicy and its binding (Deny). */
export class ClusterIdentityAdmission extends Construct {
  /** The policy (`admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy). */
  public readonly policy: ApiObject;
  /** The binding that puts the policy in force for every KeystoneClusterIdentity. */
  public readonly binding: ApiObject;

  public constructor(scope: Construct, id: string, props: ClusterIdentityAdmissionProps = {}) {
    super(scope, id);
    const name = props.name ?? CLUSTER_IDENTITY_POLICY_NAME;
    this.policy = kubeObject(this, 'Policy', 'ValidatingAdmissionPolicy', {
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [GROUP], apiVersions: [VERSION], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: [ClusterIdentityKind.plural], scope: 'Cluster' },
          ],
        },
        variables: [{ name: 'secretCheckNeeded', expression: SECRET_CHECK_NEEDED }],
        validations: [
          {
            expression: `!variables.secretCheckNeeded || ${SECRET_ACCESS}`,
            message: 'the requesting user may not get the Secret spec.secretRef names: a KeystoneClusterIdentity may only name a Secret its author can read',
            messageExpression: SECRET_ACCESS_MESSAGE,
            reason: 'Forbidden',
          },
          {
            expression: NOT_MIRRORED,
            message: 'the KeystoneClusterIdentity is in use: status.namespaces lists namespaces its Secret is mirrored into',
            messageExpression: STILL_MIRRORED_MESSAGE,
            reason: 'Forbidden',
          },
        ],
      },
    });
    this.binding = kubeObject(this, 'Binding', 'ValidatingAdmissionPolicyBinding', {
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
    this.binding.addDependency(this.policy);
  }
}
