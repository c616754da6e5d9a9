/**
 * The property values between the Pulumi engine and the provider plugin. `@pulumi/pulumi/provider` tells the engine
 * that the plugin accepts secrets, so values arrive as the engine's wire objects: a secret is
 * `{ [SIG]: SECRET, value }` (an output value `{ [SIG]: OUTPUT, value?, secret? }`, without `value` while unknown), an
 * unknown is the {@link UNKNOWN} string. The verbs (`provider-impl`) work on plain values, as the dynamic resource's
 * host hands them; the plugin therefore unwraps what comes in and wraps what must stay secret on the way out: the
 * engine keeps a value secret in the state only if the provider says so.
 */
import { UNKNOWN } from '../provider-impl';

/** The key that marks a special wire object, and its values. */
export const SIG = '4dabf18193072939515e22adb298388d';
export const SECRET = '1b47061264138c4ac30d75fd1eb44270';
export const OUTPUT = 'd0e6a833031e9bbcd3f4e8bde6ca49a4';

type Wire = Record<string, unknown>;

function special(value: unknown): Wire | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && SIG in value ? (value as Wire) : undefined;
}

/** The plain value: secrets unwrapped, an unknown output value as {@link UNKNOWN}, recursively. */
export function reveal<T = unknown>(value: unknown): T {
  const wire = special(value);
  if (wire?.[SIG] === SECRET) return reveal(wire.value);
  if (wire?.[SIG] === OUTPUT) return ('value' in wire ? reveal(wire.value) : UNKNOWN) as T;
  if (Array.isArray(value)) return value.map((v) => reveal(v)) as T;
  if (value !== null && typeof value === 'object' && wire === undefined) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reveal(v)])) as T;
  }
  return value as T;
}

/** Whether the value is or holds a secret. */
export function holdsSecret(value: unknown): boolean {
  const wire = special(value);
  if (wire?.[SIG] === SECRET) return true;
  if (wire?.[SIG] === OUTPUT) return wire.secret === true || holdsSecret(wire.value);
  if (Array.isArray(value)) return value.some(holdsSecret);
  if (value !== null && typeof value === 'object') return Object.values(value).some(holdsSecret);
  return false;
}

/** The top-level keys of `properties` that are or hold a secret. */
export function secretKeys(properties: unknown): string[] {
  if (properties === null || typeof properties !== 'object') return [];
  return Object.entries(properties).filter(([, v]) => holdsSecret(v)).map(([k]) => k);
}

/** `properties` with each of `keys` that is present wrapped as one secret. */
export function conceal<T extends object>(properties: T, keys: Iterable<string>): Wire {
  const out: Wire = { ...(properties as Wire) };
  for (const key of new Set(keys)) {
    if (out[key] !== undefined) out[key] = { [SIG]: SECRET, value: out[key] };
  }
  return out;
}
