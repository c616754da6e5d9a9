/**
 * The fake API server's wire (./fake-api-server.ts): label and field selectors as the API server reads them (labels
 * `k=v` or `k==v`, `k!=v`, `k` (has it), `!k` (lacks it); fields `path.to.field=value`; terms joined by commas, all of
 * which must hold), its Status replies, and the metadata-only view of an object.
 */
import type { Query } from '../../../src/kube/transport';

type Labelled = { metadata: Record<string, unknown> };

/** The label and field selectors of a query as one predicate. */
export function selectorOf<T extends Labelled>(query: Query): (object: T) => boolean {
  const labels = labelSelectorOf(query);
  const fields = (typeof query.fieldSelector === 'string' ? query.fieldSelector : '')
    .split(',')
    .filter(Boolean)
    .map((term) => {
      const [path, value] = term.split('=');
      return (o: T) => String(path.split('.').reduce<unknown>((v, step) => (v as Record<string, unknown> | undefined)?.[step], o)) === value;
    });
  return (o) => labels(o) && fields.every((f) => f(o));
}

function labelSelectorOf(query: Query): (object: Labelled) => boolean {
  const text = typeof query.labelSelector === 'string' ? query.labelSelector : '';
  const terms = text
    .split(',')
    .filter(Boolean)
    .map((term): ((labels: Record<string, string>) => boolean) => {
      const ne = /^([^!=]+)!=(.*)$/.exec(term);
      if (ne) return (l) => l[ne[1]] !== ne[2];
      const eq = /^([^!=]+)==?(.*)$/.exec(term);
      if (eq) return (l) => l[eq[1]] === eq[2];
      if (term.startsWith('!')) return (l) => !(term.slice(1) in l);
      return (l) => term in l;
    });
  return (o) => terms.every((t) => t((o.metadata.labels as Record<string, string> | undefined) ?? {}));
}

/** An object as the metadata-only view serves it. */
export const partial = <T extends { metadata: unknown }>(o: T) => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata });

/** A `Status` reply. */
export const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

/** A 403 as the RBAC authorizer words it. */
export const forbidden = (verb: string, plural: string, namespace?: string) =>
  status(403, 'Forbidden', `${plural} is forbidden: User "system:serviceaccount:ops:operator" cannot ${verb} resource "${plural}" in API group ""${namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope'}`);
