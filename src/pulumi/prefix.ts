/**
 * The per-resource prefix of the deterministic credential names of the Pulumi face, for both of its resources: unique
 * per project, stack and resource name, so two stacks of one project never touch each other's credentials in Keystone.
 * Loads no Pulumi module: the provider plugin computes it from the resource's URN.
 */
import { childPrefix } from '../api/naming';

/** Where a Pulumi resource lives, as its URN says. */
export interface PulumiLocation {
  readonly project: string;
  readonly stack: string;
  readonly name: string;
  /**
   * The package resource type, for the provider plugin's `keystone-appcred:index:ApplicationCredential`; absent for the
   * dynamic resource (whose prefixes predate the plugin). A dynamic and a plugin resource of the same name in one
   * stack, as during a migration from one to the other, therefore never share a credential name.
   */
  readonly type?: string;
}

/** `<name>-<8 hex>-applicationcredential`; the hash covers the project, the stack, the name and the type. */
export function pulumiPrefix(location: PulumiLocation): string {
  return childPrefix({ cluster: location.type === undefined ? 'pulumi' : `pulumi/${location.type}`, namespace: `${location.project}.${location.stack}`, name: location.name });
}

/**
 * The parts of a resource URN `urn:pulumi:<stack>::<project>::<parent types$><type>::<name>`. Throws on anything
 * else, naming the value.
 */
export function parseUrn(urn: string): Required<PulumiLocation> {
  const parts = urn.split('::');
  const head = /^urn:pulumi:(.+)$/.exec(parts[0] ?? '');
  if (!head || parts.length < 4) throw new Error(`not a Pulumi resource URN: ${JSON.stringify(urn)}`);
  const qualified = parts[2];
  return { stack: head[1], project: parts[1], type: qualified.slice(qualified.lastIndexOf('$') + 1), name: parts.slice(3).join('::') };
}
