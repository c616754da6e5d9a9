/**
 * What a tenant who may edit Secrets in their namespace does to a delivered Secret: changes a key's value, swaps the
 * credential id for another order's (a credential of the same user, or one of no order), or deletes the Secret.
 */
import fc from 'fast-check';
import type { EventKind } from '../model';
import { childPrefix, credentialName } from '../../../src/api';
import { describeCredential, proofOf } from '../../../src/lifecycle/ownership';
import { base64, IDENTITY, PATHS, TARGET_CLUSTER, type Tenant } from '../objects';
import { ORDER_NAMES, tenantArb } from './orders';

type TenantEdit = { kind: 'tenant-edit'; tenant: Tenant; name: string; edit: 'key' | 'swap' | 'swap-keys' | 'delete' };
type AnotherInstallation = { kind: 'another-installation'; tenant: Tenant; name: string; ahead: number };

export const tenantEdit: EventKind<TenantEdit> = {
  kind: 'tenant-edit',
  description: "a tenant edits the delivered Secret: a key changed, the id swapped for another credential's of the user, the id and the secret swapped with each other, or the Secret deleted",
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('tenant-edit' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), edit: fc.constantFrom('key' as const, 'swap' as const, 'swap-keys' as const, 'delete' as const) }),
  apply: (world, e) => {
    const server = world.serverOf(e.tenant);
    const name = `${e.name}-credentials`;
    const secret = server.object(PATHS.secrets, e.tenant, name);
    if (!secret) return;
    if (e.edit === 'delete') {
      world.tenantDeletedSecret.set(`${e.tenant}/${e.name}`, world.time.now());
      return server.remove(PATHS.secrets, e.tenant, name);
    }
    const data = { ...(secret.data as Record<string, string>) };
    if (e.edit === 'key') data['clouds.yaml'] = base64('clouds: {}\n');
    else if (e.edit === 'swap-keys') [data.application_credential_id, data.application_credential_secret] = [data.application_credential_secret, data.application_credential_id];
    else {
      const other = world.orders().find((o) => o.tenant === e.tenant && o.name !== e.name && world.delivered(o)?.application_credential_id);
      data.application_credential_id = base64(other ? (world.delivered(other)?.application_credential_id as string) : '0123456789abcdef0123456789abcdef');
    }
    server.seed(PATHS.secrets, { ...secret, data }, 'kubectl-edit');
  },
};

/**
 * Another installation (a second cluster's operator) ordering the same names for the same Keystone user: it mints the
 * order's next generation (or the one after) under the order's deterministic name, marked with its own owner id. The
 * order must leave it alone (src/lifecycle/ownership.ts) and mint its own under the alternate name.
 */
export const anotherInstallation: EventKind<AnotherInstallation> = {
  kind: 'another-installation',
  description: "another installation mints a credential under an order's deterministic name for the same user, marked as its own",
  weight: 1,
  generate: () => fc.record({ kind: fc.constant('another-installation' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), ahead: fc.integer({ min: 1, max: 2 }) }),
  apply: (world, e) => {
    const order = world.order(e);
    const userId = world.keystone.userNamed(`${e.tenant}-${IDENTITY.user}`);
    const projectId = world.keystone.projectNamed(`${e.tenant}-${IDENTITY.project}`);
    if (!order || !userId || !projectId) return;
    const location = { ...(world.serverOf(e.tenant) === world.target ? { cluster: TARGET_CLUSTER } : {}), namespace: e.tenant, name: e.name };
    const generation = ((order.status as { credentialGeneration?: number } | undefined)?.credentialGeneration ?? 0) + e.ahead;
    const name = credentialName(childPrefix(location), generation);
    if ([...world.keystone.credentials.values()].some((c) => c.name === name && c.userId === userId)) return;
    const secret = `another-installation-${world.seed}-${e.tenant}-${e.name}-${generation}-9f2c`;
    const stored = world.keystone.addCredential({ name, userId, projectId, secret, description: describeCredential('managed by keystone-appcred', { owner: '00000000-0000-4000-8000-0000000000aa', proof: proofOf(secret) }) });
    world.foreign.add(stored.id);
  },
};
