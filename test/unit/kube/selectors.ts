/**
 * Label and field selectors as the API server reads them, for the fake API server (./fake-api-server.ts): labels
 * `k=v` (or `k==v`), `k!=v`, `k` (has it), `!k` (lacks it); fields `path.to.field=value`; terms joined by commas, all
 * of which must hold.
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
