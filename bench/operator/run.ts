/**
 * What the parts of the bench share, passed from one to the next: the cluster, the figures so far (the report's rows,
 * in order), the Keystone users made, the orders converged, and the operator running now.
 */
import type { LocalKeystone } from '../../src/testbed/keystone';
import type { OperatorProcess } from '../../test/support/operator';
import type { Figure } from '../report';
import type { Env } from './cluster';

/** One run of the bench, from the cluster up to the report. */
export class Run {
  /** The report's rows, in the order the parts measured them. */
  readonly figures: Figure[] = [];
  /** The KeystoneUsers made so far (`u0`, `u1`, …), each with its role assignment. */
  readonly users = new Set<string>();
  /** How many orders exist and are converged (the next new one is `o<total>`). */
  total = 0;
  #op: OperatorProcess | undefined;

  /**
   * @param stops what to stop on the way out, last started first (Ctrl-C too); a part that starts a process of its
   * own beside the operator running now pushes its stop here
   */
  constructor(
    readonly env: Env,
    readonly keystone: LocalKeystone,
    readonly stops: (() => Promise<void>)[],
  ) {}

  /** The operator running now: a part that replaces it (stopped first) assigns the new one here. */
  get op(): OperatorProcess {
    if (this.#op === undefined) throw new Error('no operator launched yet');
    return this.#op;
  }

  set op(op: OperatorProcess) {
    this.#op = op;
  }

  /** Stops the operator running now, if one was launched (again is harmless). */
  async stopOperator(): Promise<void> {
    await this.#op?.server.stop(10_000);
  }
}
