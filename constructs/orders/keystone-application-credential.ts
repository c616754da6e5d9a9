/**
 * The typed KeystoneApplicationCredential order (spec: Spec). Checked at synth with `validate` from `src/api`, so a
 * broken rule reads as it does from the API server.
 */
import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { KIND } from '../../src/api/types';
import { validate } from '../../src/api/validation';
import { durationString, type Duration } from '../duration';
import { defined, emitOrder, emittedControlPlaneRef, type ControlPlaneReference, type OrderProps, type OrderReference } from './order';

/** The HTTP method an access rule allows (Keystone's access rules). */
export enum AccessRuleMethod {
  /** `GET` */
  GET = 'GET',
  /** `HEAD` */
  HEAD = 'HEAD',
  /** `POST` */
  POST = 'POST',
  /** `PUT` */
  PUT = 'PUT',
  /** `PATCH` */
  PATCH = 'PATCH',
  /** `DELETE` */
  DELETE = 'DELETE',
}

/**
 * One request a token from the credential may make (Keystone's access rules), enforced by keystonemiddleware's
 * `auth_token` in the service that validates the token.
 */
export interface AccessRule {
  /** The service type in Keystone's catalog, e.g. `compute` or `object-store`. */
  readonly service: string;
  /** The HTTP method. */
  readonly method: AccessRuleMethod;
  /** The request path, beginning with `/`; `*` matches one path segment, `**` any number. */
  readonly path: string;
}

/** An output format the delivered Secret carries beside the reference's three keys (issue 49). */
export enum SecretFormat {
  /** `cloud.conf`: the `[Global]` section of the OpenStack cloud controller manager and Cinder CSI. */
  CLOUD_CONF = 'CloudConf',
  /** The `OS_*` keys openstackclient, Terraform and an openrc read, for a container's `envFrom`. */
  ENV = 'Env',
}

/** What deleting the order does to its delivered credential (issue 49). */
export enum DeletionPolicy {
  /** The reference's Deletion Semantics: every credential, the backup, the parked secrets and the Secret go. */
  DELETE = 'Delete',
  /**
   * The delivered credential stays in Keystone, its Secret (owner reference removed) and its backup stay; what is
   * superseded and the order's other children go, and an Event names what was left and the commands that remove it.
   */
  RETAIN = 'Retain',
}

/**
 * What the delivered Secret carries beside the reference's three keys and the operator's two labels (issue 49). The
 * operator owns exactly what it writes: a key, label or annotation removed here leaves the Secret.
 */
export interface SecretTemplateProps {
  /**
   * Labels of the Secret (not the operator's own, `c5c3.io/keystoneapplicationcredential-*`).
   * @default none
   */
  readonly labels?: { [key: string]: string };
  /**
   * Annotations of the Secret (not the operator's own).
   * @default none
   */
  readonly annotations?: { [key: string]: string };
  /**
   * Output formats: `cloud.conf`, the `OS_*` keys.
   * @default none
   */
  readonly formats?: SecretFormat[];
  /**
   * Keys of your own, each value a template in which `{{ field }}` is replaced by a field of `authURL`, `region`,
   * `interface`, `applicationCredentialID`, `applicationCredentialSecret`, `userID`, `projectID`, `projectName`,
   * `projectDomainName`, and `{{` opens nothing else.
   * @default none
   */
  readonly data?: { [key: string]: string };
}

/** The Secret an adoption reads the secret from, in the order's namespace (issue 49). */
export interface AdoptSecretReference {
  /** The Secret's name. */
  readonly name: string;
  /**
   * The key holding the secret.
   * @default "application_credential_secret"
   */
  readonly key?: string;
}

/** An existing application credential of the ordered user to adopt instead of minting the first one (issue 49). */
export interface AdoptProps {
  /** Its Keystone id (32 hexadecimal digits). */
  readonly credentialID: string;
  /** The Secret in the order's namespace that holds its secret. */
  readonly secretRef: AdoptSecretReference;
}

/** The rotation schedule of a credential. */
export interface RotationProps {
  /**
   * The time between two scheduled rotations, as a Go duration string (`720h`, `1h30m`), written as given, or a
   * {@link Duration}, written in Go's canonical form (`720h0m0s`). `0s` turns the schedule off; any other value is at
   * least `1m`, and at most `87600h`.
   * @default "720h" (the API server's schema default)
   */
  readonly interval?: string | Duration;
  /**
   * How long the superseded credential stays in Keystone after the delivered Secret switched, as `interval` is given.
   * Not negative, and shorter than a non-zero interval.
   * @default "24h" (the API server's schema default)
   */
  readonly gracePeriod?: string | Duration;
}

/** Props of {@link KeystoneApplicationCredential}. */
export interface KeystoneApplicationCredentialProps extends OrderProps {
  /** The ControlPlane whose identity plane the credential is created in. Both halves are immutable. */
  readonly controlPlaneRef: ControlPlaneReference;
  /** The KeystoneUser in the order's namespace the credential belongs to. Immutable. */
  readonly userRef: OrderReference;
  /** The KeystoneProject in the order's namespace the credential is scoped to. Immutable. */
  readonly projectRef: OrderReference;
  /**
   * The lowest credential generation the order must hold (at least 1). Raising it above `status.credentialGeneration`
   * rotates at once; it may only increase.
   * @default 1 (the API server's schema default)
   */
  readonly credentialGeneration?: number;
  /**
   * The rotation schedule.
   * @default {} (interval 720h, grace period 24h)
   */
  readonly rotation?: RotationProps;
  /**
   * Not in the reference (an extension, issue 42): the names of the roles the credential carries, each in the
   * namespace's `allowedRoles` and assigned to the user on the project by a KeystoneRoleAssignment. A change rotates.
   * @default every role the user holds on the project
   */
  readonly roles?: string[];
  /**
   * Not in the reference (an extension, issue 42): the only requests a token from the credential may make, enforced by
   * keystonemiddleware in each service. A change rotates.
   * @default none
   */
  readonly accessRules?: AccessRule[];
  /**
   * Not in the reference (an extension, issue 49): labels, annotations, output formats and keys of your own that the
   * delivered Secret carries.
   * @default none: the reference's three keys and the operator's two labels
   */
  readonly secretTemplate?: SecretTemplateProps;
  /**
   * Not in the reference (an extension, issue 49): what deleting the order does to its delivered credential.
   * @default DeletionPolicy.DELETE (the reference's Deletion Semantics)
   */
  readonly deletionPolicy?: DeletionPolicy;
  /**
   * Not in the reference (an extension, issue 49): adopt an existing application credential of the ordered user,
   * proven by its secret, instead of minting the first one.
   * @default none: the first credential is minted
   */
  readonly adopt?: AdoptProps;
}

/**
 * A KeystoneApplicationCredential: one Keystone application credential for an ordered user on an ordered project,
 * delivered as the Secret `<name>-credentials` beside the order. A KeystoneUser of the same name in the same namespace
 * delivers a Secret of the same name: give the two orders different names.
 */
export class KeystoneApplicationCredential extends Construct {
  /** The emitted object. */
  public readonly apiObject: ApiObject;
  /** The object's name. */
  public readonly name: string;
  /** The object's namespace, if set on it or its chart. */
  public readonly namespace?: string;
  /** The Secret the credential is delivered in: `<name>-credentials`. */
  public readonly secretName: string;

  public constructor(scope: Construct, id: string, props: KeystoneApplicationCredentialProps) {
    super(scope, id);
    const rotation = props.rotation
      ? defined({ interval: durationString(props.rotation.interval), gracePeriod: durationString(props.rotation.gracePeriod) })
      : undefined;
    const spec = defined({
      controlPlaneRef: emittedControlPlaneRef(props.controlPlaneRef),
      userRef: { name: props.userRef.name },
      projectRef: { name: props.projectRef.name },
      credentialGeneration: props.credentialGeneration,
      rotation,
      roles: props.roles && [...props.roles],
      accessRules: props.accessRules?.map((r) => ({ service: r.service, method: r.method, path: r.path })),
      secretTemplate: props.secretTemplate
        ? defined({
            labels: props.secretTemplate.labels && { ...props.secretTemplate.labels },
            annotations: props.secretTemplate.annotations && { ...props.secretTemplate.annotations },
            formats: props.secretTemplate.formats && [...props.secretTemplate.formats],
            data: props.secretTemplate.data && { ...props.secretTemplate.data },
          })
        : undefined,
      deletionPolicy: props.deletionPolicy,
      adopt: props.adopt && { credentialID: props.adopt.credentialID, secretRef: defined({ name: props.adopt.secretRef.name, key: props.adopt.secretRef.key }) },
    });
    ({ apiObject: this.apiObject, name: this.name, namespace: this.namespace } = emitOrder(this, KIND, spec, props, (o) => validate(o)));
    this.secretName = `${this.name}-credentials`;
  }
}
