/**
 * The dependencies one credential pass reached (docs/concepts/passes.md, Wake-ups): each port the pass calls is wrapped
 * ({@link noting}) so that a call OpenBao, Keystone or an API server did not answer names that dependency in
 * `unanswered` (the work queue waits on it: src/operator/runtime/dependencies.ts), and a call it answered names it in
 * `answered` (its waiters are woken).
 */
import { KubeApiError } from '../../kube/errors';
import type { BackupPort, CredentialPort } from '../../lifecycle/ports';
import type { ClusterPort } from '../../plane/ports';

/** OpenBao, as a failed pass names it: one dependency for every order (one login, one policy). */
export const OPENBAO_DEPENDENCY = 'OpenBao';

/** Keystone at an auth URL, as a failed pass names it: every order of the ControlPlanes with that URL shares it. */
export const keystoneDependency = (authUrl: string): string => `Keystone ${authUrl.replace(/\/+$/, '')}`;

/** An API server, as a failed pass names it. */
export const apiServerDependency = (cluster: string | undefined): string => (cluster ? `the API server of cluster ${cluster}` : 'the API server');

/** What a pass's calls found of its dependencies: those that did not answer, and those that did. */
export interface Reached {
  readonly unanswered: Set<string>;
  readonly answered: Set<string>;
}

/**
 * The dependencies one pass reached, and the pass's ports with their calls noted ({@link noting}): an API server's
 * writes (its reads come from the caches), every call of Keystone's and OpenBao's.
 */
export class PassReach implements Reached {
  readonly unanswered = new Set<string>();
  readonly answered = new Set<string>();

  /** The port of a cluster (`cluster`: its name; undefined: the management cluster), its writes noted. */
  apiServer(port: ClusterPort, cluster?: string): ClusterPort {
    return noting(port, this, apiServerDependency(cluster), unansweredByApiServer, API_WRITES);
  }

  /**
   * Keystone at `authUrl` as `connect` makes its port, given what to call each time Keystone itself answered a call
   * (a list its known credentials served did not reach it); a call Keystone did not answer is noted.
   */
  keystone(authUrl: string, connect: (onAnswer: () => void) => CredentialPort): CredentialPort {
    const at = keystoneDependency(authUrl);
    return noting(
      connect(() => this.answered.add(at)),
      { unanswered: this.unanswered },
      at,
      unansweredByKeystone,
    );
  }

  /** OpenBao's port at a backing path: every call that failed did not answer. */
  openBao(port: BackupPort): BackupPort {
    return noting(port, this, OPENBAO_DEPENDENCY, () => true);
  }

  /** The dependencies that answered every call the pass made of them (one that failed a call did not answer it). */
  answeredAll(): string[] {
    return [...this.answered].filter((d) => !this.unanswered.has(d));
  }
}

/** The cluster port's calls that reach the API server (its reads come from the caches). */
export const API_WRITES: ReadonlySet<PropertyKey> = new Set(['readSecret', 'createSecret', 'applySecret', 'deleteSecret', 'writeStatus', 'addFinalizer', 'removeFinalizer']);

/**
 * `port` with every failed call that `counts` noted in `reached.unanswered` as `dependency` (the error is thrown on as it
 * was), and, given `reached.answered`, every other call (one that returned, or a refusal `counts` does not count) noted
 * there: every method, or only `methods` (each an async call); the other methods are the port's own, bound to it. Built
 * once per pass, its methods the port's (own and its prototypes'), so a read the caches answer passes straight through.
 * With `methods`, the port's other methods are looked up and bound once per port and set ({@link shapeOf}) and the
 * wrapper inherits them: every pass of a resync wraps the cluster ports, and looking the methods up per pass was 21 ms
 * of the 146 a resync of 2,000 converged orders took in a CPU profile (docs/benchmarks-operator.md), and most of its
 * garbage. So the port's methods must not change once it has been wrapped (a class's do not).
 */
export function noting<T extends object>(port: T, reached: Pick<Reached, 'unanswered'> & Partial<Reached>, dependency: string, counts: (error: unknown) => boolean, methods?: ReadonlySet<PropertyKey>): T {
  const shape = methods ? shapeOf(port, methods) : shapeOf(port, methodsOf(port), false);
  // The port's methods, the watched ones too, are inherited from the shape (a prototype made once per port and set of
  // methods): a pass makes one object, its note, not a function per watched method.
  const wrapped = Object.create(shape.proto) as Record<PropertyKey, unknown>;
  wrapped[NOTE] = { port, reached, dependency, counts } satisfies Note;
  return wrapped as T;
}

/** Where a wrapped port's watched calls are noted: the port, what the pass reached, as which dependency, and which errors count. */
interface Note {
  readonly port: object;
  readonly reached: Pick<Reached, 'unanswered'> & Partial<Reached>;
  readonly dependency: string;
  readonly counts: (error: unknown) => boolean;
}

/** The key of a wrapped port's {@link Note}. */
const NOTE = Symbol('note');

/** Calls a watched method of the note's port and notes whether its dependency answered. */
async function noted(note: Note, name: PropertyKey, args: unknown[]): Promise<unknown> {
  const { port, reached, dependency, counts } = note;
  try {
    const reply = await (Reflect.get(port, name) as (...a: unknown[]) => Promise<unknown>).apply(port, args);
    reached.answered?.add(dependency);
    return reply;
  } catch (error) {
    (counts(error) ? reached.unanswered : reached.answered)?.add(dependency);
    throw error;
  }
}

/** A port's methods for {@link noting}: a prototype with those it leaves to the port, bound to it, and the watched ones noting. */
interface Shape {
  readonly proto: object;
}

/** The shapes of the ports wrapped with a set of methods, by port and set (both live as long as the process). */
const shapes = new WeakMap<object, WeakMap<ReadonlySet<PropertyKey>, Shape>>();

/** The shape of `port` watching `methods`, made on its first wrapping (`keep`: false for a set made for one wrapping). */
function shapeOf(port: object, methods: ReadonlySet<PropertyKey>, keep = true): Shape {
  let byMethods = shapes.get(port);
  let shape = byMethods?.get(methods);
  if (!shape) {
    const proto: Record<PropertyKey, unknown> = {};
    for (const name of methodsOf(port)) {
      if (methods.has(name)) {
        proto[name] = function (this: Record<PropertyKey, unknown>, ...args: unknown[]) {
          return noted(this[NOTE] as Note, name, args);
        };
      } else proto[name] = (Reflect.get(port, name) as (...args: unknown[]) => unknown).bind(port);
    }
    shape = { proto };
    if (keep) {
      if (!byMethods) shapes.set(port, (byMethods = new WeakMap()));
      byMethods.set(methods, shape);
    }
  }
  return shape;
}

/** The names of an object's methods, its own and its prototypes' (not Object's). */
function methodsOf(port: object): Set<PropertyKey> {
  const names = new Set<PropertyKey>();
  for (let o: object | null = port; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Reflect.ownKeys(o)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(o, name)?.value === 'function') names.add(name);
    }
  }
  return names;
}

/** Keystone did not answer (no connection, no reply in time, 5xx or 429): an outage, not a refusal of this order's. */
export function unansweredByKeystone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === true;
}

/** An API server did not answer a write: no HTTP answer at all, a 5xx or a 429. A refusal (4xx) is the order's own. */
export function unansweredByApiServer(error: unknown): boolean {
  return !(error instanceof KubeApiError) || error.status >= 500 || error.status === 429;
}
