/**
 * Delivery to Kubernetes from Pulumi: a Secret with the spec's data keys (`clouds.yaml`, `application_credential_id`,
 * `application_credential_secret`), and the keys of the credential's `secretTemplate` (issue 49: `cloud.conf`, the
 * `OS_*` keys, keys of your own), with labels and annotations of your own, rewritten as a whole by the same `pulumi up`
 * that rotates the credential (never a Secret with keys of two generations). Import it from
 * `keystone-appcred/pulumi/kubernetes` (it needs `@pulumi/kubernetes`; neither the package root nor
 * `keystone-appcred/pulumi` loads it).
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Labels, SECRET_KEYS, secretName } from '../api/naming';
import { CLOUD_CONF_KEY } from '../api/secret-template';

/** The outputs of a credential the Secret carries (a `KeystoneApplicationCredential` has them). */
export interface DeliveredCredential {
  readonly credentialId: pulumi.Input<string>;
  readonly credentialSecret: pulumi.Input<string>;
  readonly cloudsYaml: pulumi.Input<string>;
  /** `cloud.conf` (the credential's format `CloudConf`). @default none */
  readonly cloudConf?: pulumi.Input<string | undefined>;
  /** The `OS_*` keys (the credential's format `Env`). @default none */
  readonly env?: pulumi.Input<Record<string, string> | undefined>;
  /** The keys of your own (the credential's `secretTemplate.data`). @default none */
  readonly data?: pulumi.Input<Record<string, string> | undefined>;
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
  /** Annotations (issue 49: Reflector, Velero). @default {} */
  readonly annotations?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

/** A Kubernetes Secret carrying a credential under the spec's three keys. */
export class CredentialSecret extends pulumi.ComponentResource {
  /** The Secret. */
  readonly secret: k8s.core.v1.Secret;
  /** Its name. */
  readonly secretName: pulumi.Output<string>;
  /** The spec's three data keys, in the order `status.secretKeys` reports them; the template's keys follow them. */
  readonly secretKeys: readonly string[] = [...SECRET_KEYS];

  constructor(name: string, args: CredentialSecretArgs, opts: pulumi.ComponentResourceOptions = {}) {
    super('keystone-appcred:kubernetes:CredentialSecret', name, {}, opts);
    const namespace = args.namespace ?? 'default';
    const labels = pulumi.output(args.labels ?? {}).apply((extra) =>
      pulumi.all([namespace]).apply(([ns]) => ({ ...extra, [Labels.name]: name, [Labels.namespace]: ns })),
    );
    const c = args.credential;
    const templated = pulumi
      .all([c.cloudsYaml, c.credentialId, c.credentialSecret, c.cloudConf, c.env, c.data])
      .apply(([cloudsYaml, id, secret, cloudConf, env, data]) => ({
        'clouds.yaml': cloudsYaml,
        application_credential_id: id,
        application_credential_secret: secret,
        ...(cloudConf !== undefined ? { [CLOUD_CONF_KEY]: cloudConf } : {}),
        ...env,
        ...data,
      }));
    this.secret = new k8s.core.v1.Secret(
      name,
      {
        metadata: { name: args.secretName ?? secretName(name), namespace, labels, ...(args.annotations ? { annotations: args.annotations } : {}) },
        type: 'Opaque',
        stringData: pulumi.secret(templated),
      },
      { parent: this },
    );
    this.secretName = this.secret.metadata.name;
    this.registerOutputs({ secretName: this.secretName });
  }
}
