/**
 * The condition reasons of every kind, from the constants the reconcilers set them from (src/api/conditions.ts,
 * src/api/cluster-identity.ts, src/plane/reasons.ts): which condition of which kind carries which reason. One table,
 * read by the generated reference (docs/reference/conditions.md), the troubleshooting index (docs/troubleshoot/) and
 * the test that every reason has its troubleshooting entry.
 */
import { AdmissionReason, ConditionType, CredentialReason, DeliveryReason, ReadyReason } from '../../src/api/conditions';
import { ClusterIdentityReason, CredentialsMirroredReason, IdentityAllowedReason, IdentityConditionType } from '../../src/api/cluster-identity';
import { PlaneConditionType } from '../../src/api/identity-plane';
import { AdminCredentialReason, AssignmentReason, PLANE_READY_REASON, ProjectReason, UserReason } from '../../src/plane/reasons';
import { code, table } from './markdown';

/** A kind, the page of its troubleshooting entries (docs/troubleshoot/<page>.md), and each condition's reasons. */
export interface KindReasons {
  readonly kind: string;
  readonly page: string;
  readonly conditions: Readonly<Record<string, readonly string[]>>;
}

const values = (...groups: readonly Readonly<Record<string, string>>[]): string[] => [...new Set(groups.flatMap((g) => Object.values(g)))];
const ADMISSION = values(AdmissionReason);
/** What the identity plane's order kinds share (identity-plane.md, Shared behaviour): no SecretAccessNotGranted, which only a KeystoneUser reads. */
const PLANE_ADMISSION = [...ADMISSION.filter((r) => r !== AdmissionReason.SecretAccessNotGranted), AdminCredentialReason.WaitingForCABundle];
/**
 * A KeystoneUser's DeliveryReady reuses the credential's reasons; it has no backup, so never BackupNotSynced, and no
 * template (issue 49), so never SecretTemplateInvalid.
 */
const USER_DELIVERY = values(DeliveryReason).filter((r) => r !== DeliveryReason.BackupNotSynced && r !== DeliveryReason.SecretTemplateInvalid);

/** Every kind the operator reports conditions on, and every reason of each condition. */
export const KIND_REASONS: readonly KindReasons[] = [
  {
    kind: 'KeystoneApplicationCredential',
    page: 'keystoneapplicationcredential',
    conditions: {
      [ConditionType.CredentialReady]: [...values(CredentialReason), ...ADMISSION],
      [ConditionType.DeliveryReady]: [...values(DeliveryReason), ...ADMISSION],
      [ConditionType.Ready]: [...values(ReadyReason), ...ADMISSION],
    },
  },
  {
    kind: 'ControlPlane',
    page: 'controlplane',
    conditions: {
      [PlaneConditionType.AdminCredentialReady]: values(AdminCredentialReason),
      [IdentityConditionType.IdentityAllowed]: values(IdentityAllowedReason),
      [IdentityConditionType.CredentialsMirrored]: values(CredentialsMirroredReason),
      [PlaneConditionType.Ready]: [PLANE_READY_REASON],
    },
  },
  {
    kind: 'KeystoneProject',
    page: 'keystoneproject',
    conditions: { [PlaneConditionType.ProjectReady]: [...values(ProjectReason), ...PLANE_ADMISSION], [PlaneConditionType.Ready]: [PLANE_READY_REASON, ...PLANE_ADMISSION] },
  },
  {
    kind: 'KeystoneUser',
    page: 'keystoneuser',
    conditions: {
      [PlaneConditionType.UserReady]: [...values(UserReason), ...PLANE_ADMISSION, AdmissionReason.SecretAccessNotGranted],
      [PlaneConditionType.DeliveryReady]: [...USER_DELIVERY, ...PLANE_ADMISSION, AdmissionReason.SecretAccessNotGranted],
      [PlaneConditionType.Ready]: [PLANE_READY_REASON, ...PLANE_ADMISSION, AdmissionReason.SecretAccessNotGranted],
    },
  },
  {
    kind: 'KeystoneRoleAssignment',
    page: 'keystoneroleassignment',
    conditions: { [PlaneConditionType.AssignmentReady]: [...values(AssignmentReason), ...PLANE_ADMISSION], [PlaneConditionType.Ready]: [PLANE_READY_REASON, ...PLANE_ADMISSION] },
  },
  { kind: 'KeystoneClusterIdentity', page: 'keystoneclusteridentity', conditions: { Ready: values(ClusterIdentityReason) } },
];

/** Every reason of a kind, each once. */
export const reasonsOf = (kind: KindReasons): string[] => [...new Set(Object.values(kind.conditions).flat())];

/** The link from a page in `from` (a docs/ folder) to a reason's troubleshooting entry. */
const entry = (kind: KindReasons, reason: string, from: string): string =>
  `[${reason}](${from === 'troubleshoot' ? '' : '../troubleshoot/'}${kind.page}.md#${reason.toLowerCase()})`;

/** docs/reference/conditions.md: per kind, each condition and its reasons, each linking its troubleshooting entry. */
export function conditionsTable(): string {
  const rows = KIND_REASONS.flatMap((kind) => Object.entries(kind.conditions).map(([type, reasons]) => [kind.kind, code(type), [...new Set(reasons)].map((r) => entry(kind, r, 'reference')).join(', ')]));
  return table(['kind', 'condition', 'reasons'], rows);
}

/** docs/troubleshoot/README.md: every reason, alphabetically, with the kinds that report it. */
export function troubleshootingIndex(): string {
  const kinds = new Map<string, KindReasons[]>();
  for (const kind of KIND_REASONS) for (const reason of reasonsOf(kind)) kinds.set(reason, [...(kinds.get(reason) ?? []), kind]);
  const reasons = [...kinds.keys()].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase(), 'en'));
  return table(['reason', 'kind'], reasons.map((reason) => [code(reason), (kinds.get(reason) ?? []).map((k) => `[${k.kind}](${k.page}.md#${reason.toLowerCase()})`).join(', ')]));
}
