/**
 * What a credential may do: the roles it carries and the access rules it is restricted to (issue 42, least privilege).
 * Both are extension fields of the KeystoneApplicationCredential beyond the reference (`spec.roles`,
 * `spec.accessRules`), the inputs `roles` and `accessRules` of the Pulumi resource, and what Keystone's create takes
 * (`roles`, `access_rules`; keystone-application-credentials.rst: "optionally a list of roles that is a subset of the
 * creating User's roles on the Project"). Keystone keeps both immutable, so a change of either is a rotation
 * (src/lifecycle/rotation.ts), never an edit.
 *
 * The bounds and rules are Keystone's own where Keystone has one (its JSON schema of an access rule: a service type of
 * letters, digits and hyphens up to 64 characters, a method of six, a path beginning with `/` of up to 225 characters;
 * role names up to 255 characters), and keystonemiddleware's where its matcher gives a path meaning (`*` one segment,
 * `**` any number, `{name}` one segment; any other character literal, except that the matcher copies it into a regular
 * expression unescaped, so `+ ? ( ) [ ] | \ ^ $` would change or break the match: refused).
 */
import type { FieldBound, Rule } from './field-rules';

/** An HTTP method an access rule names (Keystone's schema). */
export const ACCESS_RULE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** An HTTP method an access rule names. */
export type AccessRuleMethod = (typeof ACCESS_RULE_METHODS)[number];

/**
 * One access rule (Keystone's `access_rules[]`): a token from the credential may make this request of this service,
 * and no request an access rule does not allow, where keystonemiddleware's `auth_token` guards the service with its
 * `service_type` set.
 */
export interface AccessRule {
  /** The service type, as the catalog lists it (`compute`, `object-store`, `image`). */
  readonly service: string;
  /** The HTTP method: GET, HEAD, POST, PUT, PATCH or DELETE. */
  readonly method: AccessRuleMethod | string;
  /**
   * The request path the rule allows, beginning with `/`; `*` matches one path segment, `**` any number of segments
   * (`/v2.1/servers/*`, `/v1/AUTH_*\/containers/**`).
   */
  readonly path: string;
}

/** Bounds of the two fields. */
export const PrivilegeLimits = {
  /** Entries of `roles` (as a namespace's `allowedRoles`). */
  rolesMaxItems: 64,
  /** A role name: Keystone's column. */
  roleMaxLength: 255,
  /** Entries of `accessRules`; bounds the CEL cost of the duplicate check. */
  accessRulesMaxItems: 64,
  /** `service`: Keystone's id string. */
  serviceMaxLength: 64,
  /** `path`: Keystone's schema. */
  pathMaxLength: 225,
} as const;

/** The service type pattern (Keystone's `id_string`). */
export const SERVICE_PATTERN = '^[a-zA-Z0-9-]+$';
/**
 * A path keystonemiddleware's matcher reads as written: `/`, then path characters (RFC 3986's unreserved ones, `%`,
 * and `! & ' * , ; = : @ /`) and `{name}` segments.
 */
export const PATH_PATTERN = "^/([-A-Za-z0-9._~%!&'*,;=:@/]|\\{[A-Za-z0-9_-]+\\})*$";

/** The key of an access rule: two rules with the same service, method and path are the same rule. */
export function accessRuleKey(rule: AccessRule): string {
  return `${rule.service} ${rule.method} ${rule.path}`;
}

const SERVICE = new RegExp(SERVICE_PATTERN);
const PATH = new RegExp(PATH_PATTERN);
/** A CEL string literal of a pattern (CEL's escapes double each backslash). */
const celString = (pattern: string): string => `'${pattern.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const asRules = (self: unknown): AccessRule[] => (Array.isArray(self) ? (self as AccessRule[]) : []);

/** The schema bounds of the two fields (the CRD states the same in its openAPIV3Schema). */
export const PRIVILEGE_BOUNDS: readonly FieldBound[] = [
  { path: 'spec.roles', type: 'array', minItems: 1, maxItems: PrivilegeLimits.rolesMaxItems, unique: true },
  { path: 'spec.roles[]', type: 'string', maxLength: PrivilegeLimits.roleMaxLength },
  { path: 'spec.accessRules', type: 'array', minItems: 1, maxItems: PrivilegeLimits.accessRulesMaxItems },
  { path: 'spec.accessRules[].service', required: true, type: 'string', maxLength: PrivilegeLimits.serviceMaxLength },
  { path: 'spec.accessRules[].method', required: true, type: 'string', enum: ACCESS_RULE_METHODS },
  { path: 'spec.accessRules[].path', required: true, type: 'string', maxLength: PrivilegeLimits.pathMaxLength },
];

/** The CRD rules of the two fields, each with its TypeScript twin (see `rules.ts`). */
export const PRIVILEGE_RULES: readonly Rule[] = [
  {
    path: 'spec.roles',
    // identity-plane.md: role names carry no comma (Keystone's lists are comma-separated), as a KeystoneRoleAssignment's role.
    cel: "self.all(r, !r.contains(','))",
    message: 'roles entries must not contain a comma',
    transition: false,
    holds: (self) => !Array.isArray(self) || self.every((r) => typeof r !== 'string' || !r.includes(',')),
  },
  {
    path: 'spec.accessRules',
    cel: 'self.all(a, self.exists_one(b, b.service == a.service && b.method == a.method && b.path == a.path))',
    message: 'accessRules must not name the same service, method and path twice',
    transition: false,
    holds: (self) => {
      const keys = asRules(self).map(accessRuleKey);
      return new Set(keys).size === keys.length;
    },
  },
  {
    path: 'spec.accessRules[].service',
    cel: `self.matches(${celString(SERVICE_PATTERN)})`,
    message: 'accessRules[].service must be a service type of letters, digits and hyphens, as the catalog lists it (compute, object-store)',
    transition: false,
    holds: (self) => typeof self !== 'string' || SERVICE.test(self),
  },
  {
    path: 'spec.accessRules[].path',
    cel: `self.matches(${celString(PATH_PATTERN)})`,
    message:
      "accessRules[].path must begin with / and hold only path characters (letters, digits, - . _ ~ % ! & ' , ; = : @ /), the wildcards * (one segment) and ** (any segments), and {name} segments",
    transition: false,
    holds: (self) => typeof self !== 'string' || PATH.test(self),
  },
  {
    path: 'spec.accessRules[].path',
    cel: "!self.contains('***')",
    message: 'accessRules[].path must not hold *** (* is one segment, ** any number of segments)',
    transition: false,
    holds: (self) => typeof self !== 'string' || !self.includes('***'),
  },
];
