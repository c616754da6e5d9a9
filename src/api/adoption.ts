/**
 * `spec.adopt` (issue 49, not the reference's; K-ORC #670): an order may take an existing application credential of its
 * user under management instead of minting its first one, so a team moves a hand-made credential under the operator
 * without a second credential or a gap. The order proves the credential its own by its secret: the secret is given in
 * a Secret of the order's own namespace (the namespace the operator already reads and writes the delivered Secret in,
 * and the only one the order's author speaks for), and Keystone must authenticate the id with it. What is refused, and
 * why, is the lifecycle's (src/lifecycle/adoption.ts).
 */
import { celString } from './label-selector';
import { DNS_SUBDOMAIN_PATTERN } from './naming';
import type { FieldBound, Rule } from './field-rules';
import { DATA_KEY_PATTERN } from './secret-template';

/** Keystone's form of an application credential id: `uuid4().hex`. */
export const KEYSTONE_ID_PATTERN = '^[0-9a-f]{32}$';

/** The key of the adoption Secret that holds the secret, unless `adopt.secretRef.key` names another. */
export const DEFAULT_ADOPT_SECRET_KEY = 'application_credential_secret';

/** `spec.adopt`. */
export interface AdoptSpec {
  /** The Keystone id of the application credential to adopt: one of the ordered user's, scoped to the ordered project. */
  readonly credentialID: string;
  /** The Secret in the order's namespace that holds the credential's secret. */
  readonly secretRef: AdoptSecretRef;
}

/** The Secret an adoption reads the secret from, in the order's own namespace. */
export interface AdoptSecretRef {
  /** The Secret's name. */
  readonly name: string;
  /**
   * The key that holds the secret.
   * @default "application_credential_secret" (a delivered Secret's key, so one of them can be adopted as it is)
   */
  readonly key?: string;
}

/** Bounds of the adoption's fields. */
export const AdoptionLimits = {
  /** `secretRef.name`: a Secret's name. */
  secretNameMaxLength: 253,
  /** `secretRef.key`: a Secret's key. */
  secretKeyMaxLength: 253,
  /** `credentialID`: Keystone's 32 hex digits. */
  credentialIdLength: 32,
} as const;

const KEYSTONE_ID = new RegExp(KEYSTONE_ID_PATTERN);
const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);
const DATA_KEY = new RegExp(DATA_KEY_PATTERN);

/** Whether `id` has Keystone's form of an application credential id. */
export function isKeystoneId(id: string): boolean {
  return KEYSTONE_ID.test(id);
}

/** The schema bounds of `spec.adopt` (the CRD states the same in its openAPIV3Schema). */
export const ADOPTION_BOUNDS: readonly FieldBound[] = [
  { path: 'spec.adopt.credentialID', required: true, type: 'string', maxLength: AdoptionLimits.credentialIdLength },
  { path: 'spec.adopt.secretRef', required: true, type: 'object' },
  { path: 'spec.adopt.secretRef.name', required: true, type: 'string', maxLength: AdoptionLimits.secretNameMaxLength },
  { path: 'spec.adopt.secretRef.key', type: 'string', maxLength: AdoptionLimits.secretKeyMaxLength },
];

/** The CRD rules of `spec.adopt`, each with its TypeScript twin (see `rules.ts`). */
export const ADOPTION_RULES: readonly Rule[] = [
  {
    path: 'spec.adopt.credentialID',
    cel: `self.matches(${celString(KEYSTONE_ID_PATTERN)})`,
    message: 'adopt.credentialID must be a Keystone application credential id: 32 lowercase hexadecimal digits',
    transition: false,
    holds: (self) => typeof self !== 'string' || isKeystoneId(self),
  },
  {
    path: 'spec.adopt.secretRef.name',
    cel: `self.matches(${celString(DNS_SUBDOMAIN_PATTERN)})`,
    message: 'adopt.secretRef.name must be a Secret name in the order\'s namespace: a DNS subdomain of lowercase letters, digits, hyphens or dots',
    transition: false,
    holds: (self) => typeof self !== 'string' || DNS_SUBDOMAIN.test(self),
  },
  {
    path: 'spec.adopt.secretRef.key',
    cel: `self.matches(${celString(DATA_KEY_PATTERN)})`,
    message: 'adopt.secretRef.key must be a Secret key: letters, digits, hyphens, underscores or dots',
    transition: false,
    holds: (self) => typeof self !== 'string' || DATA_KEY.test(self),
  },
];
