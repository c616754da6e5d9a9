/**
 * Reading a ControlPlane's admin credential from its Secrets (identity-plane.md, ControlPlane): the `clouds.yaml` of
 * `adminCredential.cloudCredentialsRef` and the CA bundle of `caBundleSecretRef`. Pure: the driver hands in the Secrets.
 */
import { X509Certificate } from 'node:crypto';
import { adminCredentialSecretName, PlaneDefaults, type ControlPlane } from '../api';
import { CloudsYamlError, parseAdminCloud } from '../keystone';
import type { AdminConnection, SecretObject } from './ports';
import { AdminCredentialReason } from './reasons';

/** The key of the admin Secret that holds the document. */
export const CLOUDS_YAML_KEY = 'clouds.yaml';

/** The Secrets a ControlPlane names, as observed (undefined: not found). */
export interface AdminSecrets {
  readonly cloudCredentials?: SecretObject;
  readonly caBundle?: SecretObject;
}

/** The admin connection, or why there is none yet. */
export type AdminCredentialCheck =
  | { readonly ok: true; readonly connection: AdminConnection }
  | {
      readonly ok: false;
      readonly reason: typeof AdminCredentialReason.WaitingForCloudsYaml | typeof AdminCredentialReason.CloudsYamlError | typeof AdminCredentialReason.WaitingForCABundle;
      readonly message: string;
    };

/** The Secret names a ControlPlane reads, in its own namespace. */
export function adminSecretNames(controlPlane: ControlPlane): { readonly cloudCredentials: string; readonly caBundle?: string } {
  const ca = controlPlane.spec.services.keystone.external.caBundleSecretRef;
  return { cloudCredentials: adminCredentialSecretName(controlPlane.spec.adminCredential), ...(ca ? { caBundle: ca.name } : {}) };
}

/**
 * The admin connection of a ControlPlane: `WaitingForCloudsYaml` while the Secret or its `clouds.yaml` key is missing
 * or empty, `CloudsYamlError` for a document that does not hold a usable password or application-credential cloud of
 * `cloudName` (issue 42: `auth_type: v3applicationcredential`),
 * `WaitingForCABundle` while a referenced CA bundle is missing, empty or holds no PEM certificate. The auth URL is always the ControlPlane's
 * `authURL` (an `auth_url` in the document is not used: the ControlPlane says which Keystone).
 */
export function adminConnectionOf(controlPlane: ControlPlane, secrets: AdminSecrets, identity?: { readonly cloudName: string; readonly waiting?: string }): AdminCredentialCheck {
  const ref = controlPlane.spec.adminCredential.cloudCredentialsRef;
  // With adminCredential.identityRef the credential is the mirror of the KeystoneClusterIdentity's Secret, read with the
  // identity's cloudName (src/plane/cluster-identity.ts decides it); it waits while the identity does not allow it.
  if (ref === undefined) {
    const name = controlPlane.spec.adminCredential.identityRef?.name;
    if (identity === undefined) {
      return { ok: false, reason: AdminCredentialReason.WaitingForCloudsYaml, message: `adminCredential.identityRef (KeystoneClusterIdentity ${String(name)}) is not resolved yet` };
    }
    if (identity.waiting !== undefined) return { ok: false, reason: AdminCredentialReason.WaitingForCloudsYaml, message: identity.waiting };
  }
  const secretName = adminCredentialSecretName(controlPlane.spec.adminCredential);
  const cloudName = ref ? ref.cloudName || PlaneDefaults.cloudName : (identity?.cloudName ?? PlaneDefaults.cloudName);
  if (!secrets.cloudCredentials) {
    return { ok: false, reason: AdminCredentialReason.WaitingForCloudsYaml, message: `Secret ${secretName} not found in namespace ${controlPlane.metadata.namespace}` };
  }
  const document = secrets.cloudCredentials.data[CLOUDS_YAML_KEY];
  if (!document || document.trim() === '') {
    return { ok: false, reason: AdminCredentialReason.WaitingForCloudsYaml, message: `Secret ${secretName} has no key ${CLOUDS_YAML_KEY} (or it is empty)` };
  }
  let cloud;
  try {
    cloud = parseAdminCloud(document, cloudName);
  } catch (error) {
    if (!(error instanceof CloudsYamlError)) throw error;
    return { ok: false, reason: AdminCredentialReason.CloudsYamlError, message: `Secret ${secretName}: ${error.message}` };
  }
  const caRef = controlPlane.spec.services.keystone.external.caBundleSecretRef;
  let caBundle: string | undefined;
  if (caRef) {
    const key = caRef.key || PlaneDefaults.caBundleKey;
    if (!secrets.caBundle) {
      return { ok: false, reason: AdminCredentialReason.WaitingForCABundle, message: `CA bundle Secret ${caRef.name} not found in namespace ${controlPlane.metadata.namespace}` };
    }
    caBundle = secrets.caBundle.data[key];
    if (!caBundle || caBundle.trim() === '') {
      return { ok: false, reason: AdminCredentialReason.WaitingForCABundle, message: `CA bundle Secret ${caRef.name} has no key ${key} (or it is empty)` };
    }
    // TLS would drop what is not a certificate without a word and fail later as "unable to verify": say it here.
    if (!holdsCertificate(caBundle)) {
      return { ok: false, reason: AdminCredentialReason.WaitingForCABundle, message: `CA bundle Secret ${caRef.name} key ${key} holds no PEM certificate` };
    }
  }
  const authUrl = controlPlane.spec.services.keystone.external.authURL;
  return { ok: true, connection: { authUrl, cloud, ...(caBundle !== undefined ? { caBundle } : {}) } };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Whether a bundle holds at least one PEM certificate that parses. */
function holdsCertificate(bundle: string): boolean {
  for (const [pem] of bundle.matchAll(PEM_CERTIFICATE)) {
    try {
      new X509Certificate(pem);
      return true;
    } catch {
      // Not a certificate; look at the next block.
    }
  }
  return false;
}
