/**
 * Restarting the file's kube-apiserver (test/support/kube.ts) as an outage of the API server: SIGTERM, then the same
 * binary with the same arguments, environment and working directory (same port, certificates and etcd). The caller
 * holds the cluster (its member of the pool, or the cluster lock), so no other file is using it.
 *
 * The Jest parent's handle of the old process cannot stop the new one, so a watchdog stops it when etcd stops (the
 * global teardown stops etcd last) or the Jest parent exits.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubeRequest } from './kubectl';

/** A process as /proc shows it. */
export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function processes(match: (argv: string[]) => boolean): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!match(argv)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const env = Object.fromEntries(
        readFileSync(`/proc/${entry}/environ`, 'utf8')
          .split('\0')
          .filter((kv) => kv.includes('='))
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      out.push({ pid: Number(entry), ppid, argv, env, cwd: readlinkSync(`/proc/${entry}/cwd`) });
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return out;
}

/** Whether a process runs (and is no zombie). */
export function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The kube-apiserver of this file (by the port of `KAC_KUBE_SERVER`) and its etcd. */
export function apiserverOfThisRun(): { apiserver: Proc; etcdPid: number } {
  const port = new URL(process.env.KAC_KUBE_SERVER as string).port;
  const [apiserver] = processes((a) => a[0]?.endsWith('kube-apiserver') === true && a.includes(`--secure-port=${port}`));
  if (!apiserver) throw new Error(`no kube-apiserver with --secure-port=${port}`);
  const etcdUrl = apiserver.argv.find((a) => a.startsWith('--etcd-servers='))?.split('=')[1] as string;
  const [etcd] = processes((a) => a[0]?.endsWith('etcd') === true && a.includes(`--listen-client-urls=${etcdUrl}`));
  if (!etcd) throw new Error(`no etcd at ${etcdUrl}`);
  return { apiserver, etcdPid: etcd.pid };
}

/**
 * SIGTERM and wait until it is gone; SIGKILL after 10 s. (The test API server stops taking requests at once on SIGTERM,
 * then took 20 s to exit in a trial run: the rest is its own cleanup, which a restart need not wait for.)
 */
export async function stopProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (alive(pid)) {
    if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
    await sleep(50);
  }
}

/**
 * Starts the kube-apiserver again exactly as it ran, logging where it logged, with a watchdog that stops it when etcd
 * stops or when the Jest process that started the original exits. Returns its pid.
 */
export function startApiserverAgain(original: Proc, etcdPid: number): number {
  const logFile = join(process.env.KAC_KUBE_DIR as string, 'kube-apiserver.log');
  const fd = openSync(existsSync(logFile) ? logFile : '/dev/null', 'a');
  const child = spawn(original.argv[0], original.argv.slice(1), { cwd: original.cwd, env: original.env, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  child.unref();
  const pid = child.pid as number;
  const watchdog = `while kill -0 ${original.ppid} 2>/dev/null && kill -0 ${etcdPid} 2>/dev/null && kill -0 ${pid} 2>/dev/null; do sleep 1; done; kill ${pid} 2>/dev/null; sleep 10; kill -9 ${pid} 2>/dev/null`;
  spawn('/bin/sh', ['-c', watchdog], { detached: true, stdio: 'ignore' }).unref();
  return pid;
}

/** Whether the API server answers `/readyz` with 200. */
export async function apiserverReady(): Promise<boolean> {
  try {
    return (await kubeRequest('GET', '/readyz', { timeoutMs: 2_000 })).status === 200;
  } catch {
    return false;
  }
}

/** When a restart stopped the API server and when it was ready again (ms since the epoch), and the new pid. */
export interface ApiserverRestart {
  readonly stoppedAt: number;
  readonly readyAt: number;
  readonly pid: number;
}

/** Restarts this file's API server: stopped (SIGTERM), started again, and ready. */
export async function restartApiserver(timeoutMs = 120_000): Promise<ApiserverRestart> {
  const { apiserver, etcdPid } = apiserverOfThisRun();
  await stopProcess(apiserver.pid);
  const stoppedAt = Date.now();
  const pid = startApiserverAgain(apiserver, etcdPid);
  await eventually(apiserverReady, timeoutMs, 200);
  return { stoppedAt, readyAt: Date.now(), pid };
}
