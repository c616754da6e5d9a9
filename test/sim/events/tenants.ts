/**
 * What a tenant who may edit Secrets in their namespace does to a delivered Secret: changes a key's value, swaps the
 * credential id for another order's (a credential of the same user, or one of no order), or deletes the Secret.
 */
import fc from 'fast-check';
import type { EventKind } from '../model';
import { base64, PATHS, type Tenant } from '../objects';
import { ORDER_NAMES, tenantArb } from './orders';

type TenantEdit = { kind: 'tenant-edit'; tenant: Tenant; name: string; edit: 'key' | 'swap' | 'delete' };

export const tenantEdit: EventKind<TenantEdit> = {
  kind: 'tenant-edit',
  description: 'a tenant edits the delivered Secret: a key changed, the id swapped for another credential of the user, or the Secret deleted',
  weight: 2,
  generate: () => fc.record({ kind: fc.constant('tenant-edit' as const), tenant: tenantArb, name: fc.constantFrom(...ORDER_NAMES), edit: fc.constantFrom('key' as const, 'swap' as const, 'delete' as const) }),
  apply: (world, e) => {
    const server = world.serverOf(e.tenant);
    const name = `${e.name}-credentials`;
    const secret = server.object(PATHS.secrets, e.tenant, name);
    if (!secret) return;
    if (e.edit === 'delete') return server.remove(PATHS.secrets, e.tenant, name);
    const data = { ...(secret.data as Record<string, string>) };
    if (e.edit === 'key') data['clouds.yaml'] = base64('clouds: {}\n');
    else {
      const other = world.orders().find((o) => o.tenant === e.tenant && o.name !== e.name && world.delivered(o)?.application_credential_id);
      data.application_credential_id = base64(other ? (world.delivered(other)?.application_credential_id as string) : '0123456789abcdef0123456789abcdef');
    }
    server.seed(PATHS.secrets, { ...secret, data }, 'kubectl-edit');
  },
};
