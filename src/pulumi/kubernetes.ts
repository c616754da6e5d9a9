/**
 * Delivery to Kubernetes from Pulumi: a Secret with the spec's data keys (`clouds.yaml`, `application_credential_id`,
 * `application_credential_secret`), rewritten by the same `pulumi up` that rotates the credential. Import it from
 * `keystone-appcred/pulumi/kubernetes` (it needs `@pulumi/kubernetes`; neither the package root nor
 * `keystone-appcred/pulumi` loads it).
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Labels, SECRET_KEYS, secretName } from '../api/naming';

/** The outputs of a credential the Secret carries (a `KeystoneApplicationCredential` has them). */
export interface DeliveredCredential {
  readonly credentialId: pulumi.Input<string>;
  readonly credentialSecret: pulumi.Input<string>;
  readonly cloudsYaml: pulumi.Input<string>;
}

/** The inputs of {@link CredentialSecret}. */
export interface CredentialSecretArgs {
  /** The credential to deliver. */
  readonly credential: DeliveredCredential;
  /** The namespace of the Secret. @default "default" */
  readonly namespace?: pulumi.Input<string>;
  /** The Secret's name. @default `<component name>-credentials`, as the spec names the delivered Secret */
  readonly secretName?: pulumi.Input<string>;
  /** Extra labels; the spec's two labels are always set. @default {} */
  readonly labels?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

/** A Kubernetes Secret carrying a credential under the spec's three keys. */
export class CredentialSecret extends pulumi.ComponentResource {
  /** The Secret. */
  readonly secret: k8s.core.v1.Secret;
  /** Its name. */
  readonly secretName: pulumi.Output<string>;
  /** Its data keys, in the order `status.secretKeys` reports them. */
  readonly secretKeys: readonly string[] = [...SECRET_KEYS];

  constructor(name: string, args: CredentialSecretArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super('keystone-appcred:kubernetes:CredentialSecret', name, {}, opts);
    const namespace = args.namespace ?? 'default';
    const labels = pulumi.output(args.labels ?? {}).apply((extra) =>
      pulumi.all([namespace]).apply(([ns]) => ({ ...extra, [Labels.name]: name, [Labels.namespace]: ns })),
    );
    this.secret = new k8s.core.v1.Secret(
      name,
      {
        metadata: { name: args.secretName ?? secretName(name), namespace, labels },
        type: 'Opaque',
        stringData: {
          'clouds.yaml': pulumi.secret(args.credential.cloudsYaml),
          application_credential_id: args.credential.credentialId,
          application_credential_secret: pulumi.secret(args.credential.credentialSecret),
        },
      },
      { parent: this },
    );
    this.secretName = this.secret.metadata.name;
    this.registerOutputs({ secretName: this.secretName });
  }
}
