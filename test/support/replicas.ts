/**
 * The operator's replicas as a Deployment's pods with `restartPolicy: Always`: each replica is `keystone-appcred
 * operator` as a child process (./operator.ts) under one identity name across its restarts (its log file, its Lease
 * candidacy); when it exits, for whatever reason, it is started again a second later, as the kubelet would. One of them
 * leads (the Lease), the others stand by.
 */
import { isLeader, startOperator, waitReady, type OperatorOptions, type OperatorProcess } from './operator';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An exit of a replica: which, when, and its code or signal. */
export interface ReplicaExit {
  readonly name: string;
  readonly at: number;
  readonly code: string;
}

export interface Replicas {
  /** The running process of each replica (a restarted one replaces its predecessor). */
  readonly current: readonly OperatorProcess[];
  readonly exits: readonly ReplicaExit[];
  /** The replica that leads now (its leader gauge), if one does. */
  leader(): Promise<OperatorProcess | undefined>;
  /** Waits until a replica leads that is not `not` (a process that was stopped); resolves with it and when it was seen. */
  nextLeader(not: OperatorProcess, timeoutMs?: number): Promise<{ readonly leader: OperatorProcess; readonly at: number }>;
  /** Stops every replica (SIGTERM, SIGKILL after `graceMs`); none is started again. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `names.length` replicas with the same options but their names (`--identity`, `<name>.log`), and keeps them
 * running; resolves once every one answers `/readyz`.
 */
export async function startReplicas(names: readonly string[], options: Omit<OperatorOptions, 'name'>): Promise<Replicas> {
  const current = new Map<string, OperatorProcess>();
  const exits: ReplicaExit[] = [];
  let stopping = false;
  const launch = async (name: string): Promise<OperatorProcess> => {
    const started = await startOperator({ ...options, name });
    current.set(name, started);
    started.server.process.once('exit', (code, signal) => {
      if (stopping) return;
      exits.push({ name, at: Date.now(), code: signal ?? String(code) });
      setTimeout(() => {
        if (!stopping) void launch(name);
      }, 1_000);
    });
    return started;
  };
  await Promise.all(names.map(async (name) => waitReady(await launch(name))));
  const leader = async () => {
    for (const op of current.values()) if (op.server.exited() === undefined && (await isLeader(op))) return op;
    return undefined;
  };
  return {
    get current() {
      return [...current.values()];
    },
    exits,
    leader,
    async nextLeader(not, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const op = await leader();
        if (op && op !== not) return { leader: op, at: Date.now() };
        await sleep(250);
      }
      throw new Error(`no replica took the lead within ${timeoutMs / 1000} s of ${not.name} stopping`);
    },
    async stop(graceMs = 10_000) {
      stopping = true;
      await Promise.all([...current.values()].map((op) => op.server.stop(graceMs)));
    },
  };
}
