/**
 * Converged orders cost 0 Keystone and 0 OpenBao calls at a restart, whatever is down (docs/upgrading.md: "No Keystone
 * call"). When a process becomes the leader (after a restart, a failover, an upgrade), the orders converged at that
 * instant are noted: Ready (or held back only by a standing refusal of their settings, issue 48: `CredentialReady`
 * False with `RotationWindowRefused` or `DefaultsRefused`, `DeliveryReady` True), their generation observed, the
 * delivered Secret carrying the recorded credential, the backup at their own path holding it (after the upgrade from
 * 0.1.0, its migration recorded: `status.backupPath`), Keystone holding nothing else of theirs but the superseded one in
 * its grace, and nothing due within the window. Until the window ends (a minute, or the next event), the leader makes no OpenBao
 * request on their backup paths and no Keystone request as their user (when every order of that user converged). A
 * takeover within 30 s of a change other than a process event (a consent, an order's spec), or after one made while
 * its API server was down, is not judged: its first passes react to that change (a ControlPlane change gives every
 * order of it a full pass). Nor is one within 30 s of an API server answering 403 in the namespaced Secret access mode:
 * to the operator that is the Role taken away (and given back), a change of its own ({@link secretsRefusedBetween}).
 */
import { backingPath } from '../../../src/api';
import type { Invariant } from '../model';
import { CP, IDENTITY } from '../objects';
import type { SimWorld } from '../sim-world';
import { ledgerOf, type KnownOrder } from './ledger';

const WINDOW_MS = 60_000;
/**
 * The events that start or stop processes or take a dependency away: what a takeover follows and must cope with
 * ("whatever is down"), not a change the orders react to.
 */
const NOT_A_CHANGE = new Set(['restart', 'failover', 'crash-after', 'upgrade', 'outage', 'watch']);

interface Snapshot {
  readonly process: string;
  readonly at: number;
  readonly orders: readonly KnownOrder[];
  /** The Keystone users (ids) all of whose orders converged. */
  readonly users: ReadonlyMap<string, string>;
}

type Status = {
  backupPath?: string;
  credentialID?: string;
  previousCredentialID?: string;
  previousCredentialDeleteAt?: string;
  nextRotation?: string;
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason?: string }[];
};

/** The reasons of a refusal that stands as long as the order's settings do (issue 48): the credential is valid. */
const STANDING_REFUSALS = new Set(['RotationWindowRefused', 'DefaultsRefused']);

/** Ready, or held back only by a standing refusal of the order's settings. */
function readyOrRefused(status: Status | undefined): boolean {
  const condition = (type: string) => status?.conditions?.find((c) => c.type === type);
  if (condition('Ready')?.status === 'True') return true;
  const credential = condition('CredentialReady');
  return credential?.status === 'False' && STANDING_REFUSALS.has(credential.reason ?? '') && condition('DeliveryReady')?.status === 'True';
}

/** Whether an order is converged at `at`, as the invariant means it (see the module comment). */
export function converged(world: SimWorld, order: KnownOrder, at: number): boolean {
  const ledger = ledgerOf(world);
  const object = world.order({ tenant: order.tenant as 'tenant-a', name: order.name });
  if (!object || object.metadata.deletionTimestamp || object.metadata.uid !== order.uid) return false;
  const status = object.status as Status | undefined;
  if (!status || !readyOrRefused(status)) return false;
  if (status.observedGeneration !== object.metadata.generation || world.frozenBetween(order.tenant, at, at)) return false;
  const carried = ledger.carrying.get(order.key);
  if (!carried || carried.id !== status.credentialID) return false;
  if (world.openBao.document(backingPath(CP.namespace, order.prefix, order.uid))?.application_credential_id !== carried.id) return false;
  // After the upgrade from 0.1.0, its move from the path 0.1.0 wrote recorded as done (issue 46, finding 1): until then
  // a takeover looks there once. (An order this release created records it in its own passes.)
  if (world.upgraded && status.backupPath === undefined) return false;
  const due = (time: string | undefined) => time !== undefined && Date.parse(time) <= at + WINDOW_MS;
  if (due(status.nextRotation) || (status.previousCredentialID !== undefined && due(status.previousCredentialDeleteAt))) return false;
  const recorded = new Set([status.credentialID, status.previousCredentialID]);
  return ledger.credentialsOf(order).every((c) => recorded.has(c.id));
}

/**
 * Whether an API server answered 403 in [from, to] while the operator reads Secrets per namespace: to it that is the
 * `secret-access` event's change, not an outage (src/operator/runtime/namespaces.ts reads a refused list as the Role
 * missing, and the orders there record `SecretAccessNotGranted`, docs/troubleshoot), and the namespace stays refused
 * until its next probe (≤ 10 s, DENIED_RETRY_MAX_MS). The first passes of a takeover in or just after it react to that
 * refusal and, once the namespace lists again, to its end.
 */
function secretsRefusedBetween(world: SimWorld, from: number, to: number): boolean {
  if (world.setup.secretAccess !== 'namespaced') return false;
  return world.faultLog.some((s) => (s.dependency === 'api' || s.dependency === 'target') && s.fault.mode === 'status' && s.fault.status === 403 && s.from <= to && (s.to === undefined || s.to >= from));
}

export const restartFree: Invariant = {
  name: 'restart-costs-nothing',
  description: 'converged orders cost 0 Keystone and 0 OpenBao calls at a restart, whatever is down',
  watch(world, report) {
    const ledger = ledgerOf(world);
    const pending: Snapshot[] = [];
    world.hooks.line.push((line) => {
      if (line.msg !== 'became the leader') return;
      const at = world.time.now();
      // A change in the half minute before the takeover (the ControlPlane's consent, an order's spec), or one the
      // operator could not see until now (its API server was down since), is what the new leader's first passes react
      // to: the restart's cost is not told apart from that change's.
      const unseen = (t: number) => t >= at - 30_000 || world.faultedBetween(t, at, ['api', 'target']);
      if (world.eventTimes.some((t, i) => t <= at && unseen(t) && !NOT_A_CHANGE.has(world.eventKinds[i] ?? ''))) return;
      if (secretsRefusedBetween(world, at - 30_000, at)) return;
      const live = [...ledger.orders.values()].filter((o) => !o.gone);
      const orders = live.filter((o) => converged(world, o, at));
      const users = new Map<string, string>();
      // An adoption proves the credential it names by logging in with it (issue 49): as that credential's user.
      const proving = new Set([...world.adoptions.values()].map((a) => world.keystone.credentials.get(a.id)?.userId));
      for (const tenant of new Set(live.map((o) => o.tenant))) {
        const all = live.filter((o) => o.tenant === tenant);
        const id = world.keystone.userNamed(`${tenant}-${IDENTITY.user}`);
        if (id && !proving.has(id) && all.every((o) => orders.includes(o))) users.set(id, tenant);
      }
      pending.push({ process: line.process, at, orders, users });
    });
    return {
      check() {
        const now = world.time.now();
        for (const snapshot of [...pending]) {
          const end = Math.min(snapshot.at + WINDOW_MS, world.nextEventAfter(snapshot.at) ?? Number.POSITIVE_INFINITY);
          if (now < end) continue;
          pending.splice(pending.indexOf(snapshot), 1);
          const calls = world.network.calls.filter((c) => c.process === snapshot.process && c.at >= snapshot.at && c.at < end);
          for (const order of snapshot.orders) {
            const path = backingPath(CP.namespace, order.prefix, order.uid).split('/').slice(1).join('/');
            const former = backingPath(CP.namespace, order.prefix).split('/').slice(1).join('/');
            const openBao = calls.filter((c) => c.dependency === 'openbao' && (c.path.endsWith(path) || c.path.endsWith(former)));
            if (openBao.length > 0) report(`${order.key} was converged when ${snapshot.process} took over and cost ${openBao.length} OpenBao requests in its first ${Math.round((end - snapshot.at) / 1000)} s (${describe(openBao)})`);
          }
          for (const [user, tenant] of snapshot.users) {
            const keystone = calls.filter((c) => c.dependency === 'keystone' && c.actor === user);
            if (keystone.length > 0) report(`every order of ${tenant}'s user was converged when ${snapshot.process} took over and it made ${keystone.length} Keystone requests as that user in its first ${Math.round((end - snapshot.at) / 1000)} s (${describe(keystone)})`);
          }
        }
      },
    };
  },
};

const describe = (calls: readonly { method: string; path: string; outcome?: number | string }[]) =>
  calls
    .slice(0, 4)
    .map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{32}/g, '<id>')} → ${c.outcome ?? '?'}`)
    .join('; ');
