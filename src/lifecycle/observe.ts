/**
 * What a pass observes of the world through the ports (the runner's first step, ./runner.ts): the parked secrets, the
 * credentials Keystone holds under the order's names sorted into the order's own and the foreign ones (ownership.ts),
 * the backup, the delivered Secret and what it carries, the admission and the gates. Also what a face sees without
 * Keystone and the backup ({@link observeCached}, for settled.ts).
 */
import type { KeystoneApplicationCredentialStatus } from '../api';
import { backupIdleWhileStopped } from './migration';
import type { BackupObservation, DeliveryObservation, ForeignCredential, GenerationRecord, LifecycleOrder, Observations } from './model';
import { needsProof, proofOf, sortCredentials } from './ownership';
import type { BackupPort, KeystoneCredential, Ports, SecretData } from './ports';
import { TemplateError, carriesDocument, type ObservedSecret } from './secret-template';
import type { CachedObservations } from './settled';

/** Error text of a failed observation; the ports' errors are already secret-free (Keystone and OpenBao redact theirs). */
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Observes the world through the ports. A Keystone list or a backup read that fails is an observation too (the order
 * repairs what it can without them and says what is wrong); any other failure is thrown. `order.status` maps a
 * delivered credential id to its generation while Keystone cannot be listed. The credentials Keystone lists under the
 * order's names are sorted into the order's own and the foreign ones (ownership.ts): only what the order can prove it
 * minted becomes a generation record. The backup is not read for an order that cannot act when its status records the
 * migration done (migration.ts, `backupIdleWhileStopped`): nothing that pass decides asks for it.
 */
export async function observe(ports: Ports, order: Pick<LifecycleOrder, 'status' | 'owner' | 'backupPath' | 'deleting'> = { status: {} }): Promise<Observations> {
  const status = order.status;
  const [admissionAsked, gateAsked] = [ports.admission?.(), ports.gate?.()];
  // An order that cannot act reads its backup only while its migration is not recorded (migration.ts).
  const backupAsked = backupIdleWhileStopped(order)
    ? Promise.all([admissionAsked, gateAsked]).then(([admission, gate]) => (admission || gate ? undefined : readBackup(ports.backup)))
    : readBackup(ports.backup);
  // The parked records first: the credentials they adopted (issue 49) are listed by id, their names being none of the order's.
  const parked = await ports.secrets.list();
  const adopted = new Map(parked.flatMap((p) => (p.adopted !== undefined ? [[p.adopted, p.generation] as const] : [])));
  // A face that parks no superseded secret (Pulumi) knows the adopted credential in its grace period by the status alone.
  const recordedAdoption = status.adoptedCredentialID === undefined ? undefined : recordedGeneration(status, status.adoptedCredentialID);
  if (recordedAdoption !== undefined) adopted.set(status.adoptedCredentialID as string, recordedAdoption);
  const [listed, backupRead, formerRead, delivered, admission, gate, undeliverable] = await Promise.all([
    ports.keystone.list(adopted.size > 0 ? adopted : undefined).then(
      (credentials) => ({ credentials }),
      (error: unknown) => ({ error: reason(error) }),
    ),
    backupAsked,
    readBackup(ports.formerBackup),
    ports.delivery.read(),
    admissionAsked,
    gateAsked,
    ports.undeliverable?.(),
  ]);
  const records = new Map<number, GenerationRecord>();
  for (const p of parked) {
    records.set(p.generation, { generation: p.generation, parked: p.parked, ...(p.failure !== undefined ? { failure: p.failure } : {}), ...(p.adopted !== undefined ? { adopted: p.adopted } : {}) });
  }
  let keystone: { credentials: readonly KeystoneCredential[] } | { error: string } = listed;
  const backedUp = backupRead && 'credentialId' in backupRead ? backupRead.credentialId : undefined;
  let sorted: { own: KeystoneCredential[]; foreign: ForeignCredential[] } = { own: [], foreign: [] };
  try {
    sorted = await sortByOwner(ports, order, 'credentials' in keystone ? keystone.credentials : [], records, backedUp);
  } catch (error) {
    // Keystone could not check an unmarked credential: what is the order's is not known for sure this pass.
    if (!(error instanceof VerifyError)) throw error;
    keystone = { error: error.message };
  }
  const { own, foreign } = sorted;
  for (const c of own) {
    const existing = records.get(c.generation) ?? { generation: c.generation, parked: false };
    records.set(c.generation, { ...existing, credential: { id: c.id, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}), ...(c.privileges ? { privileges: c.privileges } : {}) } });
  }
  // A generation's secret is lost only when the store itself says so: a listing may lag behind a park made a moment ago
  // (an adoption parks last, right before the pass its writes wake; a pass on a cache behind its own switch), and a lost
  // secret rotates the delivered generation at once, or deletes a successor and mints it again.
  for (const record of [...records.values()]) {
    if (record.credential && !record.parked && (await ports.secrets.read(record.generation)) !== undefined) records.set(record.generation, { ...record, parked: true });
  }
  const delivery = await deliveryOf(ports, delivered, records, status);
  return {
    generations: [...records.values()].sort((a, b) => a.generation - b.generation),
    delivery,
    ...(foreign.length > 0 && 'credentials' in keystone ? { foreign } : {}),
    ...('error' in keystone ? { keystoneError: keystone.error } : {}),
    ...(backupRead !== undefined ? { backup: backupRead } : {}),
    ...(formerRead !== undefined ? { formerBackup: formerRead } : {}),
    ...(admission ? { admission } : {}),
    ...(gate ? { gate } : {}),
    ...(undeliverable ? { undeliverable } : {}),
  };
}

/** What a backup port holds (an error is an observation too); undefined without a port. */
export function readBackup(port: BackupPort | undefined): Promise<BackupObservation> | undefined {
  return port?.read().then(
    (credentialId) => (credentialId === undefined ? {} : { credentialId }),
    (error: unknown) => ({ error: reason(error) }),
  );
}

/**
 * The listed credentials the order minted and the foreign ones (ownership.ts), with the evidence gathered: the ids the
 * status records and the backup (at the order's own path) holds, which only the order writes; an unmarked credential
 * as {@link verifiedRecords} proves it (never the delivered Secret's id as such: a tenant may edit the Secret); and a
 * parked secret's proof only for a credential that carries a proof and is settled by neither owner nor record.
 */
async function sortByOwner(
  ports: Pick<Ports, 'secrets' | 'keystone'>,
  order: Pick<LifecycleOrder, 'status' | 'owner'>,
  listed: readonly KeystoneCredential[],
  records: ReadonlyMap<number, GenerationRecord>,
  backedUp: string | undefined,
): Promise<{ own: KeystoneCredential[]; foreign: ForeignCredential[] }> {
  // A parked record's adopted id (issue 49, adoption.ts) is the order's record too: only the order writes its parked records.
  const adopted = [...records.values()].map((r) => r.adopted);
  const recorded = new Set([order.status.credentialID, order.status.previousCredentialID, backedUp, ...adopted].filter((id): id is string => id !== undefined && id !== ''));
  for (const id of await verifiedRecords(ports, recorded, listed, records)) recorded.add(id);
  const base = { ...(order.owner !== undefined ? { owner: order.owner } : {}), recorded };
  const proofs = new Map<number, string>();
  for (const g of new Set(listed.filter((c) => needsProof(base, c) && records.get(c.generation)?.parked).map((c) => c.generation))) {
    const secret = await ports.secrets.read(g);
    if (secret !== undefined) proofs.set(g, proofOf(secret));
  }
  return sortCredentials(listed, { ...base, proofs });
}

/** Keystone could not say whether an unmarked credential was minted with the order's parked secret (not a plain refusal). */
class VerifyError extends Error {
  constructor(credential: KeystoneCredential, cause: unknown) {
    super(`checking whether credential ${credential.id} (generation ${credential.generation}, without marks) was minted with the order's parked secret: ${reason(cause)}`);
    this.name = 'VerifyError';
  }
}

/**
 * The unmarked listed credentials that count as the order's records: each carries no mark (minted before marks existed,
 * by keystone-appcred 0.1.0: a marked one is judged by its marks alone), no record settles it already, its generation
 * has a parked secret, and Keystone authenticates it with that secret, so it was created with the order's secret,
 * which nobody else holds (a restricted credential cannot read it, a tenant who edits the delivered Secret cannot make
 * Keystone take it). What this proves: 0.1.0's successor, minted and parked but not switched to when the upgrade came,
 * is the order's to switch to (issue 46), and so is a delivered credential whose status a restore lost. An unmarked
 * credential Keystone does not authenticate with the parked secret is somebody else's; one without a parked secret is
 * left to its records alone. Keystone is asked once per such credential and pass (none once the status records it).
 */
async function verifiedRecords(
  ports: Pick<Ports, 'secrets' | 'keystone'>,
  recorded: ReadonlySet<string>,
  listed: readonly KeystoneCredential[],
  records: ReadonlyMap<number, GenerationRecord>,
): Promise<string[]> {
  const verify = ports.keystone.verify?.bind(ports.keystone);
  if (!verify) return [];
  const proven: string[] = [];
  for (const c of listed) {
    if (recorded.has(c.id) || c.mark.owner !== undefined || c.mark.proof !== undefined || !records.get(c.generation)?.parked) continue;
    const secret = await ports.secrets.read(c.generation);
    if (secret === undefined) continue;
    const minted = await verify(c.id, secret).catch((error: unknown) => {
      throw new VerifyError(c, error);
    });
    if (minted) proven.push(c.id);
  }
  return proven;
}

/**
 * What the delivered Secret carries: the credential it names, and whether its three keys are that credential's
 * document (its generation found by Keystone's records, else by the status, and its parked secret).
 */
async function deliveryOf(
  ports: Pick<Ports, 'secrets' | 'render' | 'template' | 'secretMetadata'>,
  delivered: Awaited<ReturnType<Ports['delivery']['read']>>,
  records: ReadonlyMap<number, GenerationRecord>,
  status: KeystoneApplicationCredentialStatus,
): Promise<DeliveryObservation> {
  if (!delivered) return { state: 'absent' };
  const credentialId = delivered.data.application_credential_id ?? '';
  if (!delivered.owned) return { state: 'foreign', ...(credentialId !== '' ? { credentialId } : {}) };
  const generation = [...records.values()].find((r) => r.credential?.id === credentialId)?.generation ?? recordedGeneration(status, credentialId);
  const secret = generation !== undefined && records.get(generation)?.parked ? await ports.secrets.read(generation) : undefined;
  const intact = secret !== undefined && carries(ports, delivered, credentialId, secret);
  return { state: 'delivered', credentialId, intact };
}

/**
 * Whether the Secret carries a credential's document whole: the three keys, those of the order's template and the
 * template's labels and annotations (secret-template.ts). A template that cannot be rendered here leaves it not intact,
 * and the write that would repair it says why.
 */
function carries(ports: Pick<Ports, 'render' | 'template' | 'secretMetadata'>, found: ObservedSecret, credentialId: string, secret: string): boolean {
  let expected: SecretData;
  try {
    expected = delivered(ports, credentialId, secret);
  } catch (error) {
    if (error instanceof TemplateError) return false;
    throw error;
  }
  return carriesDocument(found, expected, ports.secretMetadata ?? { labels: {}, annotations: {} });
}

/** The delivered Secret's data of a credential: the three keys, and those the order's template adds (issue 49). */
export function delivered(ports: Pick<Ports, 'render' | 'template'>, credentialId: string, secret: string): SecretData {
  const document = ports.render(credentialId, secret);
  return ports.template ? { ...document, ...ports.template(document) } : document;
}

/**
 * Observes what a face sees without Keystone and without the backup (the parked secrets, the delivered Secret, the
 * admission and the gates), for {@link settled}. The delivered credential is matched to its generation by the status.
 */
export async function observeCached(ports: Pick<Ports, 'secrets' | 'delivery' | 'render' | 'template' | 'secretMetadata' | 'admission' | 'gate'>, status: KeystoneApplicationCredentialStatus): Promise<CachedObservations> {
  const [parked, delivered, admission, gate] = await Promise.all([ports.secrets.list(), ports.delivery.read(), ports.admission?.(), ports.gate?.()]);
  const records = new Map(parked.map((p) => [p.generation, { generation: p.generation, parked: p.parked }]));
  const delivery = await deliveryOf(ports, delivered, records, status);
  return { parked, delivery, ...(admission ? { admission } : {}), ...(gate ? { gate } : {}) };
}

/** The generation the status records for a credential id (the delivered or the superseded one). */
function recordedGeneration(status: KeystoneApplicationCredentialStatus, credentialId: string): number | undefined {
  if (status.credentialID === credentialId) return status.credentialGeneration;
  if (status.previousCredentialID === credentialId) return status.previousCredentialGeneration;
  return undefined;
}
