/**
 * What a starter of a real component (components.ts) returns: the environment the tests read to reach the component,
 * its logs, and how to stop it. Each starter's file builds on this one; components.ts lists the starters.
 */

/** A started component. */
export interface Started {
  /** Variables the tests read to reach the component (merged into the workers' environment). */
  readonly env: Record<string, string>;
  /** Log files whose tail is worth printing when a test fails. */
  readonly logs: readonly string[];
  /** Stops the component and removes what it wrote; safe to call twice. */
  stop(): Promise<void>;
}

/** Brings one component up with its files under `workDir`. */
export type Starter = (workDir: string) => Promise<Started>;
