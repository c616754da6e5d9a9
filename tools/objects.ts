/**
 * The objects of synthesized YAML, as the release tools read them (tools/release.ts, tools/olm.ts, tools/chart/).
 */
import { parseAllDocuments } from 'yaml';

/** A manifest object, as far as the release tools read it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly [key: string]: unknown;
}

/** The objects of a multi-document YAML. */
export function objectsOf(yaml: string): Manifest[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => o !== null);
}
