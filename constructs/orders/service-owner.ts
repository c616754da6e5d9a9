/**
 * The usual set of orders for one service owner, in one namespace: a project, a user, the user's role on the project,
 * and an application credential of the user on the project.
 */
import { Construct } from 'constructs';
import { KeystoneApplicationCredential } from './keystone-application-credential';
import { KeystoneProject } from './keystone-project';
import { KeystoneRoleAssignment } from './keystone-role-assignment';
import { KeystoneUser } from './keystone-user';
import type { ControlPlaneReference } from './order';
import type { RotationProps } from './policy';

/** Props of {@link ServiceOwner}. */
export interface ServiceOwnerProps {
  /** The namespace the ControlPlane assigned to the owner; every order is created there. */
  readonly namespace: string;
  /** The ControlPlane the orders belong to. */
  readonly controlPlaneRef: ControlPlaneReference;
  /**
   * The owner's name: the KeystoneUser's name; the other orders are named after it.
   * It must leave room for the suffixes: at most 55 characters.
   */
  readonly name: string;
  /** The role the user gets on the project; it must be in the namespace's `allowedRoles`. @default "member" */
  readonly role?: string;
  /** The KeystoneProject's name. @default "<name>-project" */
  readonly projectOrderName?: string;
  /** The Keystone project name. @default the KeystoneProject's name */
  readonly projectName?: string;
  /** The Keystone user name. @default the KeystoneUser's name */
  readonly userName?: string;
  /** The KeystoneRoleAssignment's name. @default "<name>-role" */
  readonly roleAssignmentName?: string;
  /** The KeystoneApplicationCredential's name. @default "<name>-appcred" */
  readonly applicationCredentialName?: string;
  /** The application credential's rotation schedule. @default {} (720h, 24h) */
  readonly rotation?: RotationProps;
}

/** A project, a user, a role assignment and an application credential for one service owner. */
export class ServiceOwner extends Construct {
  /** The KeystoneProject. */
  public readonly project: KeystoneProject;
  /** The KeystoneUser (its password is delivered as `<name>-credentials`). */
  public readonly user: KeystoneUser;
  /** The KeystoneRoleAssignment. */
  public readonly roleAssignment: KeystoneRoleAssignment;
  /** The KeystoneApplicationCredential (delivered as `<applicationCredentialName>-credentials`). */
  public readonly applicationCredential: KeystoneApplicationCredential;

  public constructor(scope: Construct, id: string, props: ServiceOwnerProps) {
    super(scope, id);
    const namespace = props.namespace;
    const controlPlaneRef = props.controlPlaneRef;
    this.project = new KeystoneProject(this, 'Project', {
      metadata: { name: props.projectOrderName ?? `${props.name}-project`, namespace },
      controlPlaneRef,
      projectName: props.projectName,
    });
    this.user = new KeystoneUser(this, 'User', { metadata: { name: props.name, namespace }, controlPlaneRef, userName: props.userName });
    this.roleAssignment = new KeystoneRoleAssignment(this, 'RoleAssignment', {
      metadata: { name: props.roleAssignmentName ?? `${props.name}-role`, namespace },
      controlPlaneRef,
      userRef: this.user.ref,
      projectRef: this.project.ref,
      role: props.role ?? 'member',
    });
    this.applicationCredential = new KeystoneApplicationCredential(this, 'ApplicationCredential', {
      metadata: { name: props.applicationCredentialName ?? `${props.name}-appcred`, namespace },
      controlPlaneRef,
      userRef: this.user.ref,
      projectRef: this.project.ref,
      rotation: props.rotation,
    });
    this.applicationCredential.node.addDependency(this.roleAssignment);
  }
}
