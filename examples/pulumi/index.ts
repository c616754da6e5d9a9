/**
 * A complete Pulumi program: one application credential for the user the environment authenticates as (`OS_CLOUD` or
 * the `OS_*` variables), rotated weekly on `pulumi up`, with the superseded credential kept for a day.
 *
 * Run from the repository root (the top-level Pulumi.yaml points at the compiled file):
 *
 *   npm run build
 *   export OS_CLOUD=mycloud            # or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, ...
 *   pulumi stack init dev
 *   pulumi up
 *
 * In a program of your own, `npm install keystone-appcred @pulumi/pulumi` and import it the same way (inside this
 * repository the package resolves itself by name: tsconfig `paths` for the type check, `exports` at run time).
 */
import * as pulumi from '@pulumi/pulumi';
import { KeystoneApplicationCredential } from 'keystone-appcred/pulumi';
import { maybeDeployToKubernetes } from './kubernetes';

const config = new pulumi.Config();

const credential = new KeystoneApplicationCredential('ci', {
  rotation: {
    interval: config.get('interval') ?? '168h',
    gracePeriod: config.get('gracePeriod') ?? '24h',
  },
  // Raise to rotate at once (e.g. after a leak); it may only increase.
  credentialGeneration: config.getNumber('credentialGeneration') ?? 1,
});

// With `pulumi config set kubernetes true`: the CRDs, the operator and an order, and this credential as the Secret
// `ci-credentials` in the namespace `tenant-a`.
maybeDeployToKubernetes(credential);

// Stack outputs: only values that are always defined. An output that can be absent (`nextRotation` and
// `credentialExpiresAt` with the schedule off, the `previous*` ones outside a grace period) exported as is makes every
// `pulumi up` warn "Undefined value (...) will not show as a stack output"; give it a default instead.
export const credentialId = credential.credentialId;
export const credentialGeneration = credential.credentialGeneration;
export const lastRotation = credential.lastRotation;
export const nextRotation = credential.nextRotation.apply((at) => at ?? 'never (rotation.interval is 0s)');
/** Secret outputs: `pulumi stack output cloudsYaml --show-secrets > clouds.yaml`. */
export const cloudsYaml = credential.cloudsYaml;
export const credentialSecret = credential.credentialSecret;
