/**
 * The recorded status is a hint, not the truth. A restored cluster drops the status subresource, a status write that
 * lost a conflict leaves it stale, a crash after an action leaves it behind. What the delivered Secret and the backup
 * carry is observed, and the Delivered Secret contract makes it binding: "The Secret always carries the generation
 * status.credentialGeneration names", and "the superseded credential stays valid for the grace period after the
 * switch, so the delivered credential is never invalid". So before `decide` deletes anything, the status is rebuilt
 * from what is observed, and a credential the Secret or the backup carries is never deleted outside teardown.
 */
import { formatTime, type KeystoneApplicationCredentialStatus, type ResolvedRotation } from '../api';
import type { GenerationRecord, Observations } from './model';
import * as rotation from './rotation';

type Status = KeystoneApplicationCredentialStatus;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The generations whose Keystone credential the delivered Secret or the backup carries, highest first. Consumers may
 * hold these credentials, whatever the status says.
 */
export function carriedGenerations(world: Observations, records: ReadonlyMap<number, GenerationRecord>): number[] {
  const ids = new Set<string>();
  if (world.delivery.state === 'delivered') ids.add(world.delivery.credentialId);
  if (world.backup?.credentialId !== undefined) ids.add(world.backup.credentialId);
  return [...records.values()]
    .filter((r) => r.credential !== undefined && ids.has(r.credential.id))
    .map((r) => r.generation)
    .sort((a, b) => b - a);
}

/**
 * The status as the observed world proves it. With Keystone unknown this pass, the recorded status is all there is.
 *
 * - Missing or behind: the Secret (or the backup, which is written first) carries a generation above the recorded
 *   one, so the switch to it happened. It becomes the delivered generation; the generation it superseded (the next
 *   carried one, else the highest below it that Keystone still holds: the recorded one, or, when the status is older
 *   than that, the one whose grace period it lost) runs a grace period from now, because when the switch happened is
 *   not known and a consumer may not have re-read the Secret yet.
 * - Ahead: the Secret or the backup still carries a generation below the recorded one that no grace period covers
 *   (restored from an older copy, say), or Keystone still holds a lower generation with no grace period recorded (the
 *   sweep forgets a generation only after deleting it, so this is a superseded one whose grace period was lost).
 *   Consumers may hold it, so it is treated as superseded now, with a full grace period, unless one already runs.
 */
export function rebuild(status: Status, world: Observations, records: ReadonlyMap<number, GenerationRecord>, settings: ResolvedRotation, now: Date): Status {
  if (world.keystoneError !== undefined) return status;
  const carried = carriedGenerations(world, records);
  const live = rotation.liveGeneration(status);
  // A generation above the recorded one that only the backup carries and whose parked secret is lost never reached the
  // Secret (the backup is written first, and the Secret needs that secret): no switch happened to it. It stays a
  // successor whose secret is lost, replaced once the backup is repaired (Pulumi: an `up` killed after the backup).
  const secretCarries = (g: number) => world.delivery.state === 'delivered' && world.delivery.credentialId === records.get(g)?.credential?.id;
  const switched = carried.filter((g) => g <= live || records.get(g)?.parked === true || secretCarries(g));
  const highest = switched[0];
  const out: Mutable<Status> = { ...status };
  const graceUntil = (generation: number) => rotation.graceDeadline(now, settings, records.get(generation)?.credential?.expiresAt);
  if (highest !== undefined && highest > live) {
    const delivered = records.get(highest)?.credential as { id: string; expiresAt?: Date };
    out.credentialID = delivered.id;
    out.credentialGeneration = highest;
    if (delivered.expiresAt) out.credentialExpiresAt = formatTime(delivered.expiresAt);
    else delete out.credentialExpiresAt;
    out.lastRotation = formatTime(now);
    // The generation the Secret carried before: the next carried one, else the highest below it Keystone still holds
    // (a status restored from further back names one Keystone no longer holds, while the one in its grace period is there).
    const below = [...records.values()].filter((r) => r.credential !== undefined && r.generation < highest).map((r) => r.generation);
    const superseded = switched[1] ?? (below.length > 0 ? Math.max(...below) : undefined);
    const record = superseded === undefined ? undefined : records.get(superseded);
    if (record?.credential) {
      const keep = status.previousCredentialGeneration === superseded && status.previousCredentialDeleteAt !== undefined;
      out.previousCredentialID = record.credential.id;
      out.previousCredentialGeneration = superseded;
      out.previousCredentialDeleteAt = keep ? (status.previousCredentialDeleteAt as string) : graceUntil(superseded as number);
    } else {
      delete out.previousCredentialID;
      delete out.previousCredentialGeneration;
      delete out.previousCredentialDeleteAt;
    }
    return out;
  }
  if (rotation.graceRunning(status)) return out;
  // A lower generation Keystone still holds beside the delivered one, with no grace period recorded, can only be the
  // superseded one of a switch whose status was lost: the sweep forgets a generation only after deleting it.
  const behind = carried.find((g) => g < live) ?? Math.max(-1, ...[...records.values()].filter((r) => r.credential && r.generation < live).map((r) => r.generation));
  if (behind > 0) {
    out.previousCredentialID = (records.get(behind)?.credential as { id: string }).id;
    out.previousCredentialGeneration = behind;
    out.previousCredentialDeleteAt = graceUntil(behind);
  }
  return out;
}
