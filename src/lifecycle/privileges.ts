/**
 * The rules of a credential's privileges (issue 42), pure: whether the credential Keystone holds carries what the spec
 * asks for, and which asked roles a user does not hold. Keystone keeps a credential's roles and access rules immutable,
 * so a credential that carries other ones is replaced by a rotation (rotation.ts, trigger `privileges-changed`); a role
 * the user does not hold is a gate (the order waits, naming it), never a request Keystone refuses half-way.
 */
import { accessRuleKey, type AccessRule, type Privileges } from '../api';
import type { HeldPrivileges } from './model';

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
};

const ruleKeys = (rules: readonly AccessRule[] | undefined): string[] => (rules ?? []).map(accessRuleKey);

/**
 * Whether the credential that holds `held` differs from what `spec` asks for:
 * - access rules: as sets of (service, method, path); none asked and none held are the same;
 * - roles asked: the set Keystone lists for it must be that set (whether it was minted as a subset or not);
 * - no roles asked (every role the user holds): a credential minted with a chosen subset differs; one minted with
 *   every role does not, even when the user has gained roles since (as before issue 42: a new assignment never rotates).
 * Unknown privileges (a face that cannot tell) never differ from known ones by default, only where the spec asks for
 * roles the face cannot confirm.
 */
export function privilegesDiffer(spec: Privileges, held: HeldPrivileges | undefined): boolean {
  if (!held) return false;
  if (!sameSet(ruleKeys(spec.accessRules), ruleKeys(held.accessRules))) return true;
  if (spec.roles === undefined) return held.subset;
  return held.roles === undefined || !sameSet(spec.roles, held.roles);
}

/** The roles of `asked` that are not in `held`, in the order asked. */
export function rolesNotHeld(asked: readonly string[] | undefined, held: readonly string[]): string[] {
  const have = new Set(held);
  return (asked ?? []).filter((role) => !have.has(role));
}

/** Words for what a credential carries: `roles member, reader; access rules GET things /v1/things/*`. */
export function describePrivileges(privileges: Privileges): string {
  const roles = privileges.roles === undefined ? 'every role of the user' : `roles ${privileges.roles.join(', ')}`;
  const rules = privileges.accessRules === undefined || privileges.accessRules.length === 0 ? 'no access rules' : `access rules ${privileges.accessRules.map((r) => `${r.method} ${r.service} ${r.path}`).join(', ')}`;
  return `${roles}; ${rules}`;
}
