/**
 * The ports the plan runner executes actions through. Each face implements them against its own world: the reconciler
 * against Keystone, Kubernetes Secrets and OpenBao; the Pulumi provider against Keystone and its resource state; the
 * demo against Keystone and a directory.
 */
import type { KeystoneApplicationCredentialStatus, Privileges, SecretKey } from '../api';
import type { Admission, Gate, HeldCredential, HeldPrivileges, Undeliverable } from './model';
import type { CredentialMark } from './ownership';
import type { ObservedSecret, SecretMetadata } from './secret-template';

/** A credential under the order's names as Keystone holds it, whoever minted it. */
export interface KeystoneCredential {
  readonly generation: number;
  readonly id: string;
  /** Its Keystone name: the generation's deterministic name, or the alternate one. */
  readonly name: string;
  readonly expiresAt?: Date;
  /** The marks its description carries (ownership.ts); empty for one minted before marks, or by somebody else. */
  readonly mark: CredentialMark;
  /** The Keystone user that holds it. */
  readonly userId?: string;
  /** Its roles and access rules (issue 42). */
  readonly privileges?: HeldPrivileges;
}

/** A credential of the ordered user, as Keystone shows it by id (issue 49: what an adoption proves). */
export interface DescribedCredential extends HeldCredential {
  readonly name: string;
  /** The project its tokens are scoped to. */
  readonly projectId: string;
  /** It may create and delete application credentials. */
  readonly unrestricted: boolean;
  /** The marks its description carries (ownership.ts): another order's, when it has an owner. */
  readonly mark: CredentialMark;
}

/** The ordered user and project, as the port's own token names them. */
export interface CredentialScope {
  readonly userId: string;
  readonly projectId: string;
  /** @default unknown */
  readonly projectName?: string;
  /** @default unknown */
  readonly projectDomainName?: string;
}

/** What a create asks Keystone for. */
export interface CreateRequest extends Privileges {
  readonly name: string;
  readonly secret: string;
  readonly expiresAt?: Date;
  /** The marks its description carries (ownership.ts), `subset` when `roles` are given. */
  readonly mark: CredentialMark;
}

/** Keystone, authenticated as the ordered user, scoped to the ordered project. */
export interface CredentialPort {
  /**
   * Every credential whose name is one of the order's generation names (ownership.ts tells which are the order's), and
   * the credentials `adopted` names by id, each as the generation it maps to (issue 49).
   */
  list(adopted?: ReadonlyMap<string, number>): Promise<KeystoneCredential[]>;
  /**
   * Creates a restricted credential with a client-supplied secret, its description carrying `mark`, with the roles and
   * access rules asked for (none asked: every role of the user's token, no access rule).
   */
  create(request: CreateRequest): Promise<HeldCredential>;
  /** Deletes a credential; one already gone is fine. */
  delete(id: string): Promise<void>;
  /**
   * The names of the roles the user holds on the project, as Keystone shows them in the user's project-scoped token
   * (implied roles included): what a role subset may name. Absent on a port that cannot tell.
   */
  roles?(): Promise<readonly string[]>;
  /**
   * Whether Keystone authenticates the credential `id` with `secret`: true only for a credential created with that
   * secret (and not expired), false for a wrong secret or an unknown id; any other failure is thrown. The evidence
   * that a delivered Secret's id, which a tenant may have written, names the credential minted with the order's
   * parked secret (ownership.ts). Absent: the face has no such check, and a delivered Secret never counts as a record.
   */
  verify?(id: string, secret: string): Promise<boolean>;
  /** The ordered user's credential `id` (issue 49: adoption), or undefined when the user has none of that id. */
  describe?(id: string): Promise<DescribedCredential | undefined>;
  /** The user and project the port is authenticated as and scoped to. */
  scope?(): Promise<CredentialScope>;
}

/** A parked generation: its secret, or the terminal error Keystone gave when it was created. */
export interface ParkedGeneration {
  readonly generation: number;
  readonly parked: boolean;
  readonly failure?: string;
  /** The Keystone id of the credential the generation adopted (issue 49), when it adopted one. */
  readonly adopted?: string;
}

/** Where each generation's secret is parked before Keystone sees it (the spec's `secret-v<N>` children). */
export interface SecretStore {
  list(): Promise<ParkedGeneration[]>;
  /** Generates and parks the generation's secret unless one is parked already. */
  park(generation: number): Promise<void>;
  read(generation: number): Promise<string | undefined>;
  /** Records a terminal error on the generation; the order reports CredentialFailed until the generation is raised. */
  recordFailure(generation: number, message: string): Promise<void>;
  discard(generation: number): Promise<void>;
  /** Parks a given secret as the generation's, naming the credential it adopted (issue 49). */
  adopt?(generation: number, secret: string, credentialId: string): Promise<void>;
}

/**
 * A credential's document: the reference's three keys (what the backup holds), and in the delivered Secret the keys the
 * order's template adds (issue 49).
 */
export type SecretData = Readonly<Record<SecretKey, string>> & Readonly<Record<string, string>>;

/** The backup of the delivered document (OpenBao KV v2 at the backing path). */
export interface BackupPort {
  /** The credential id of the document the backup holds, if any. */
  read(): Promise<string | undefined>;
  write(data: SecretData): Promise<void>;
  remove(): Promise<void>;
}

/** The delivered Secret (or the face's equivalent). */
export interface DeliveryPort {
  /** The Secret of the delivered name: absent, or its data, labels and annotations and whether the order owns it. */
  read(): Promise<({ readonly owned: boolean } & ObservedSecret) | undefined>;
  write(data: SecretData): Promise<void>;
  remove(): Promise<void>;
  /**
   * Leaves the Secret, carrying `data`, to its consumers (`deletionPolicy: Retain`, issue 49): drops the order's owner
   * reference. @default nothing to do
   */
  retain?(data: SecretData): Promise<void>;
}

/** Everything one pass of the runner needs. */
export interface Ports {
  readonly keystone: CredentialPort;
  readonly secrets: SecretStore;
  /** Absent: no backup configured; delivery does not wait for one. */
  readonly backup?: BackupPort;
  /**
   * The path keystone-appcred 0.1.0 backed up to, when it differs from `backup`'s and the face wants it looked at this
   * pass (migration.ts): read, and its document removed once proven the order's own. @default not looked at
   */
  readonly formerBackup?: BackupPort;
  readonly delivery: DeliveryPort;
  /** Renders the document of a credential: the reference's three keys, what the backup holds. */
  render(credentialId: string, secret: string): SecretData;
  /**
   * The keys the order's template adds to a document in the delivered Secret (issue 49, secret-template.ts); throws a
   * `TemplateError` when the template cannot be rendered here. @default none
   */
  template?(document: SecretData): Readonly<Record<string, string>>;
  /** The labels and annotations the order's template adds to the delivered Secret (issue 49). @default none */
  readonly secretMetadata?: SecretMetadata;
  /**
   * The secret of the credential `spec.adopt` names (issue 49), from where the face keeps it, or why it cannot be had
   * (the Secret or its key missing). Absent: the face cannot adopt.
   */
  adoption?(): Promise<{ readonly secret: string } | { readonly refused: string }>;
  /** Admission (consent) as observed this pass; undefined when admitted. */
  admission?(): Promise<Admission | undefined>;
  /** The gates (user, project, role) as observed this pass; undefined when open. */
  gate?(): Promise<Gate | undefined>;
  /** Why no document can be delivered where the order lives, as observed this pass; undefined when it can. */
  undeliverable?(): Promise<Undeliverable | undefined>;
  writeStatus(status: KeystoneApplicationCredentialStatus): Promise<void>;
  /** Teardown is done. */
  release(): Promise<void>;
  /** Whether an error from Keystone on create is terminal (recorded as CredentialFailed) rather than retried. */
  isTerminal(error: unknown): boolean;
}
