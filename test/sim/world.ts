/**
 * One simulated installation: the management cluster's API server and a registered target cluster's (the fake API
 * server, test/unit/kube/fake-api-server.ts), Keystone and OpenBao (test/support/fake-keystone/, fake-openbao.ts), the
 * network between them and the operator's processes (./network.ts), and the processes themselves (./process.ts), all
 * on the virtual clock (./clock.ts). The world keeps what the invariants read: every log line, every call, every change
 * the API servers made, and what each tenant's consumer holds.
 */
import { createHash } from 'node:crypto';
import { FakeApiServer, type Obj } from '../unit/kube/fake-api-server';
import { FakeKeystoneServer } from '../support/fake-keystone/server';
import { FakeOpenBaoServer } from '../support/fake-openbao';
import { VirtualTime } from './clock';
import { Network } from './network';
import { OPENBAO_TOKEN, OperatorProcess, type LogLine, type ProcessSettings } from './process';

/** One change an API server made, with who made it. */
export interface ApiChange {
  readonly at: number;
  readonly cluster: 'management' | 'target';
  readonly collection: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Obj;
  readonly old?: Obj;
  readonly fieldManager?: string;
}

/** Listeners the invariants register, called as things happen (synchronously, at the virtual instant). */
export interface WorldHooks {
  readonly line: ((line: LogLine) => void)[];
  readonly change: ((change: ApiChange) => void)[];
  readonly credentialDeleted: ((credential: { id: string; name: string; userId: string; secret: string }) => void)[];
}

export class World {
  readonly time: VirtualTime;
  readonly management: FakeApiServer;
  readonly target: FakeApiServer;
  readonly keystone: FakeKeystoneServer;
  readonly openBao: FakeOpenBaoServer;
  readonly network: Network;
  readonly lines: LogLine[] = [];
  /** The log lines of reconciles (one per pass of any controller), of every process. */
  readonly reconciles: LogLine[] = [];
  readonly hooks: WorldHooks = { line: [], change: [], credentialDeleted: [] };
  /** The processes, the one started last at the end; the stopped ones stay (their lines and calls are kept). */
  readonly processes: OperatorProcess[] = [];
  /** When each process's controllers started (it leads and its caches synced), by process name. */
  readonly controllersStarted = new Map<string, number>();
  private started = 0;

  constructor(
    readonly seed: number,
    readonly settings: ProcessSettings,
  ) {
    this.time = new VirtualTime(seed);
    const now = () => new Date(this.time.now());
    let uids = 0;
    const uid = (cluster: string) => () => {
      const hex = createHash('sha256').update(`${seed}/${cluster}/${++uids}`).digest('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    };
    const onChange = (cluster: ApiChange['cluster']) => (change: Omit<ApiChange, 'at' | 'cluster'>) => {
      const recorded = { ...change, at: this.time.now(), cluster };
      for (const hook of this.hooks.change) hook(recorded);
    };
    this.management = new FakeApiServer({ uid: uid('management'), now, onChange: onChange('management') });
    this.target = new FakeApiServer({ uid: uid('target'), now, onChange: onChange('target') });
    this.keystone = new FakeKeystoneServer({ now, seed: `keystone-${seed}` });
    this.keystone.onDeleteCredential = (credential) => {
      for (const hook of this.hooks.credentialDeleted) hook(credential);
    };
    this.openBao = new FakeOpenBaoServer({ now });
    this.openBao.addToken(OPENBAO_TOKEN);
    this.network = new Network(this.keystone, this.openBao, () => this.time.now());
  }

  /** The process that runs the controllers now (the leader), if any. */
  get leader(): OperatorProcess | undefined {
    return this.processes.find((p) => p.running && p.manager.isLeader);
  }

  /** The processes that run. */
  get running(): OperatorProcess[] {
    return this.processes.filter((p) => p.running);
  }

  /** Starts one more process (a new pod of the Deployment). */
  startProcess(): OperatorProcess {
    const name = `keystone-appcred-operator-${++this.started}`;
    const process = new OperatorProcess(name, this.settings, this.network, { management: this.management, target: this.target }, (line) => {
      this.lines.push(line);
      if (line.msg === 'reconcile') this.reconciles.push(line);
      if (line.msg === 'controller started' && !this.controllersStarted.has(name)) this.controllersStarted.set(name, this.time.now());
      for (const hook of this.hooks.line) hook(line);
    });
    this.processes.push(process);
    process.start();
    // A replica that loses the Lease exits (src/cli/operator.ts) and the kubelet starts it again.
    void process.manager.lostLeadership.then(() => {
      if (!process.running) return;
      process.kill();
      this.startProcess();
    });
    return process;
  }

  /** Stops every process (the run is over) and gives the process its real clock back. */
  async close(): Promise<void> {
    for (const p of this.processes) p.kill();
    await this.time.advance(30_000);
    this.time.uninstall();
  }
}
