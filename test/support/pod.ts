/**
 * A pod's container run from its image the way a kubelet and a container runtime run it, for the tests that run the
 * operator's image (test/e2e/image-operator.test.ts). There is no kubelet here: everything is read from a Deployment
 * object (its pod template) and the image's config, and applied with the kernel's own means as root:
 *
 * - the image's root file system (`buildah from` + `buildah mount`), read-only when `readOnlyRootFilesystem` says so;
 * - the entry point: `command` (else the image's Entrypoint) and `args` (else, without `command`, the image's Cmd), in
 *   the image's WorkingDir;
 * - the environment: the image's, the `kubernetes` Service's variables (`KUBERNETES_SERVICE_HOST`/`_PORT`, pointing at
 *   the test API server), the container's `env` with downward-API `fieldRef`s filled with the pod's values (and `resourceFieldRef`s with the container's resources), `HOSTNAME`
 *   and `HOME`;
 * - the security context: `runAsUser`/`runAsGroup` (the container's over the pod's, refused if root under
 *   `runAsNonRoot`), capabilities (`drop: [ALL]` empties even the bounding set), `allowPrivilegeEscalation: false` as
 *   no_new_privs; seccomp and resource limits are not applied;
 * - volumes: `emptyDir` as a host directory (so the test sees what was written there), the service account's token,
 *   `ca.crt` and `namespace` at /var/run/secrets/kubernetes.io/serviceaccount when `automountServiceAccountToken`;
 *   /proc, /sys (read-only), a minimal /dev with /dev/shm and /dev/termination-log;
 * - its own PID namespace (the entry point is PID 1, as in a pod), UTS namespace (hostname: the pod's name) and network
 *   namespace: the container's ports are its own, reached from the test through a host port each, and the servers the
 *   pod may reach (API server, Keystone, OpenBao) appear on its 127.0.0.1 at their ports (./netns-forward.ts).
 *
 * The pieces are util-linux's `unshare` (namespaces, and the chroot) and `setpriv` (from the image: it is the last step
 * before the entry point, after the chroot, as a runtime's init does), `mount` and iproute2's `ip`.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, readdirSync, writeFileSync } from 'node:fs';
import type { Server as NetServer } from 'node:net';
import { join, posix, resolve } from 'node:path';
import { fieldValue, resourceValue } from './downward-api';
import { endpointText, forward } from './netns-forward';
import { freePort, startServer, type Server } from './proc';
import { run, runOk } from './package';

const REPO = resolve(__dirname, '..', '..');

/** The parts of a Deployment the runner reads (its pod template). */
export interface DeploymentLike {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: { readonly template: { readonly metadata?: { readonly labels?: Record<string, string> }; readonly spec: PodSpecLike } };
}

export interface PodSpecLike {
  readonly serviceAccountName?: string;
  readonly automountServiceAccountToken?: boolean;
  readonly securityContext?: SecurityContextLike;
  readonly containers: readonly ContainerLike[];
  readonly volumes?: readonly { readonly name: string; readonly emptyDir?: object; readonly [other: string]: unknown }[];
}

export interface SecurityContextLike {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly runAsNonRoot?: boolean;
  readonly readOnlyRootFilesystem?: boolean;
  readonly allowPrivilegeEscalation?: boolean;
  readonly capabilities?: { readonly add?: readonly string[]; readonly drop?: readonly string[] };
}

export interface ContainerLike {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly workingDir?: string;
  readonly env?: readonly {
    readonly name: string;
    readonly value?: string;
    readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string }; readonly resourceFieldRef?: { readonly resource: string; readonly divisor?: string | number } };
  }[];
  readonly resources?: { readonly limits?: Readonly<Record<string, string | number>>; readonly requests?: Readonly<Record<string, string | number>> };
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
  readonly securityContext?: SecurityContextLike;
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly readOnly?: boolean }[];
}

/** The image config buildah reports (OCI). */
interface ImageConfig {
  readonly User?: string;
  readonly Env?: string[];
  readonly Entrypoint?: string[];
  readonly Cmd?: string[];
  readonly WorkingDir?: string;
  readonly ExposedPorts?: Record<string, unknown>;
}

/** An image's root file system, mounted for pods to run from (read-only for them). */
export interface ImageRootfs {
  readonly image: string;
  readonly container: string;
  readonly dir: string;
  readonly config: ImageConfig;
  /** `buildah rm`: unmounts and removes the working container. */
  remove(): Promise<void>;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** `buildah from` + `buildah mount` of `image` (its name as the Deployment gives it, or its ID). */
export async function mountImage(image: string): Promise<ImageRootfs> {
  await removeStaleContainers();
  const name = `kac-pod-${process.pid}-${randomBytes(3).toString('hex')}`;
  const env = { ...process.env, BUILDAH_ISOLATION: process.env.BUILDAH_ISOLATION ?? 'chroot' };
  const container = (await runOk('buildah', ['from', '--pull=never', '--name', name, image], { cwd: REPO, env, timeoutMs: 300_000 })).trim();
  const dir = (await runOk('buildah', ['mount', container], { cwd: REPO, env })).trim();
  const inspect = JSON.parse(await runOk('buildah', ['inspect', '--type', 'image', image], { cwd: REPO, env })) as { OCIv1: { config: ImageConfig } };
  return {
    image,
    container,
    dir,
    config: inspect.OCIv1.config,
    remove: async () => {
      await run('buildah', ['rm', container], { cwd: REPO, env, timeoutMs: 120_000 });
    },
  };
}

/** Working containers of this runner left by test processes that are gone. */
async function removeStaleContainers(): Promise<void> {
  const list = JSON.parse((await runOk('buildah', ['containers', '--json'], { cwd: REPO })) || '[]') as { containername?: string; id: string }[] | null;
  for (const c of list ?? []) {
    const pid = Number(/^kac-pod-(\d+)-/.exec(c.containername ?? '')?.[1]);
    if (pid > 0 && !existsSync(`/proc/${pid}`)) await run('buildah', ['rm', c.id], { cwd: REPO, timeoutMs: 120_000 });
  }
}

/** What a pod run needs besides the Deployment. */
export interface PodOptions {
  readonly rootfs: ImageRootfs;
  readonly deployment: DeploymentLike;
  /** The pod's name (the downward API's metadata.name, the hostname). */
  readonly podName: string;
  /** Where the run's files go (logs, volumes, sockets): a short path (Unix socket paths are limited to 107 bytes). */
  readonly dir: string;
  /** The `kubernetes` Service as the kubelet announces it: the test API server. */
  readonly apiServer: { readonly host: string; readonly port: number };
  /** The service account volume's content; required when the pod template mounts the token. */
  readonly serviceAccount?: { readonly token: string; readonly caCert: string };
  /** Host ports on 127.0.0.1 the pod reaches at the same port on its own 127.0.0.1 (the API server's is added). */
  readonly reach?: readonly number[];
  /** Variables set after everything else (a bad setup, named by the test). */
  readonly envOverrides?: Record<string, string>;
}

/** A running pod. */
export interface Pod {
  readonly name: string;
  readonly server: Server;
  /** Host port of each container port, by port name and by number. */
  readonly ports: Readonly<Record<string, number>>;
  readonly spawnedAt: number;
  /** The host directory of each emptyDir volume, by name. */
  readonly volumes: Readonly<Record<string, string>>;
  /** The resolved process: what runs, as whom, in which environment. */
  readonly process: { readonly argv: readonly string[]; readonly env: Readonly<Record<string, string>>; readonly uid: number; readonly gid: number; readonly workingDir: string };
  /** The host PID of the entry point (PID 1 inside), once started. */
  pid(): number | undefined;
  /** SIGTERM to the entry point (as the kubelet stops a container), SIGKILL after `graceMs`; resolves with the exit status. */
  stop(graceMs?: number): Promise<string | undefined>;
  /** SIGKILL. */
  kill(): Promise<string | undefined>;
}

/** The kubelet's default capabilities of a container (containerd's default set). */
const RUNTIME_DEFAULT_CAPS = ['chown', 'dac_override', 'fsetid', 'fowner', 'mknod', 'net_raw', 'setgid', 'setuid', 'setfcap', 'setpcap', 'net_bind_service', 'sys_chroot', 'kill', 'audit_write'];

/** Shell quoting of one word. */
const q = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** `path` inside `root` with its symbolic links resolved inside `root` (as runc's securejoin does), as a host path. */
function resolveIn(root: string, path: string): string {
  const parts = path.split('/').filter(Boolean);
  let current = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = posix.join(current, parts[i]);
    const host = join(root, next);
    if (existsSync(host) && lstatSync(host).isSymbolicLink()) {
      const target = readlinkSync(host);
      return resolveIn(root, posix.join(target.startsWith('/') ? target : posix.join(current, target), ...parts.slice(i + 1)));
    }
    current = next;
  }
  return join(root, current);
}

/** The user's home in the image's /etc/passwd, as the runtime sets HOME ("/" when the user has no entry). */
function homeOf(rootfs: string, uid: number): string {
  try {
    const line = readFileSync(join(rootfs, 'etc/passwd'), 'utf8').split('\n').find((l) => l.split(':')[2] === String(uid));
    return line?.split(':')[5] || '/';
  } catch {
    return '/';
  }
}

/** Starts the Deployment's (first) container as a pod; see the module comment. */
export async function startPod(options: PodOptions): Promise<Pod> {
  const { deployment, rootfs, podName } = options;
  const spec = deployment.spec.template.spec;
  const container = spec.containers[0];
  if (container.image !== rootfs.image) throw new Error(`the Deployment's container runs ${container.image}, but the mounted image is ${rootfs.image}`);
  const namespace = deployment.metadata.namespace ?? 'default';
  const security = { ...spec.securityContext, ...container.securityContext };
  const [imageUser, imageGroup] = (rootfs.config.User ?? '0').split(':');
  const uid = security.runAsUser ?? Number(imageUser);
  const gid = security.runAsGroup ?? Number(imageGroup ?? 0);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`the image's user ${String(rootfs.config.User)} is not numeric and no runAsUser is set`);
  if (security.runAsNonRoot && uid === 0) throw new Error('container has runAsNonRoot and image will run as root');

  // The process: command/args over the image's Entrypoint/Cmd, in its WorkingDir.
  const argv = [...(container.command ?? rootfs.config.Entrypoint ?? []), ...(container.args ?? (container.command ? [] : (rootfs.config.Cmd ?? [])))];
  const workingDir = container.workingDir ?? (rootfs.config.WorkingDir || '/');
  const env: Record<string, string> = {};
  for (const line of rootfs.config.Env ?? []) env[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  const { host, port } = options.apiServer;
  Object.assign(env, {
    KUBERNETES_SERVICE_HOST: host,
    KUBERNETES_SERVICE_PORT: String(port),
    KUBERNETES_SERVICE_PORT_HTTPS: String(port),
    KUBERNETES_PORT: `tcp://${host}:${port}`,
    [`KUBERNETES_PORT_${port}_TCP`]: `tcp://${host}:${port}`,
    [`KUBERNETES_PORT_${port}_TCP_PROTO`]: 'tcp',
    [`KUBERNETES_PORT_${port}_TCP_PORT`]: String(port),
    [`KUBERNETES_PORT_${port}_TCP_ADDR`]: host,
  });
  const serviceAccount = spec.serviceAccountName ?? 'default';
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef) env[e.name] = fieldValue(e.valueFrom.fieldRef.fieldPath, { name: podName, namespace, serviceAccount });
    else if (e.valueFrom?.resourceFieldRef) env[e.name] = resourceValue(e.valueFrom.resourceFieldRef, container);
    else throw new Error(`the pod runner does not resolve env ${e.name} (${JSON.stringify(e.valueFrom)})`);
  }
  env.HOSTNAME = podName;
  env.HOME ??= homeOf(rootfs.dir, uid);
  Object.assign(env, options.envOverrides ?? {});

  // The capabilities the process may ever have.
  const drop = (security.capabilities?.drop ?? []).map((c) => c.toLowerCase());
  const add = (security.capabilities?.add ?? []).map((c) => c.toLowerCase());
  const bounding = drop.includes('all') ? add : [...RUNTIME_DEFAULT_CAPS.filter((c) => !drop.includes(c)), ...add];
  const boundingArg = ['-all', ...bounding.map((c) => `+${c}`)].join(',');

  // The run's directory: volumes, the service account, sockets, the root's mount point.
  const dir = options.dir;
  mkdirSync(join(dir, 'root'), { recursive: true });
  const mounts: { source: string; target: string; readOnly: boolean }[] = [];
  const volumes: Record<string, string> = {};
  for (const m of container.volumeMounts ?? []) {
    const volume = (spec.volumes ?? []).find((v) => v.name === m.name);
    if (!volume?.emptyDir) throw new Error(`the pod runner mounts emptyDir volumes only; ${m.name} is ${JSON.stringify(volume)}`);
    const hostDir = join(dir, 'volumes', m.name);
    mkdirSync(hostDir, { recursive: true });
    chmodSync(hostDir, 0o777); // as the kubelet makes an emptyDir
    volumes[m.name] = hostDir;
    mounts.push({ source: hostDir, target: m.mountPath, readOnly: m.readOnly === true });
  }
  if (spec.automountServiceAccountToken !== false) {
    if (!options.serviceAccount) throw new Error('the pod template mounts the service account token: give serviceAccount');
    const sa = join(dir, 'serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), options.serviceAccount.token, { mode: 0o644 });
    writeFileSync(join(sa, 'ca.crt'), options.serviceAccount.caCert, { mode: 0o644 });
    writeFileSync(join(sa, 'namespace'), namespace, { mode: 0o644 });
    mounts.push({ source: sa, target: SA_DIR, readOnly: true });
  }
  writeFileSync(join(dir, 'termination-log'), '');
  writeFileSync(join(dir, 'hosts'), `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\t${podName}\n`);

  // Ports: the container's own, each reached through a host port; the servers the pod reaches, on its 127.0.0.1.
  const hostSide: NetServer[] = [];
  const nsSpecs: string[] = [];
  const ports: Record<string, number> = {};
  for (const p of container.ports ?? []) {
    const sock = join(dir, `in-${p.containerPort}.sock`);
    nsSpecs.push(`${endpointText({ path: sock })}=${endpointText({ port: p.containerPort })}`);
    const hostPort = await freePort();
    hostSide.push(await forward({ port: hostPort }, { path: sock }));
    ports[String(p.containerPort)] = hostPort;
    if (p.name) ports[p.name] = hostPort;
  }
  for (const reach of new Set([port, ...(options.reach ?? [])])) {
    const sock = join(dir, `out-${reach}.sock`);
    hostSide.push(await forward({ path: sock }, { port: reach }));
    nsSpecs.push(`${endpointText({ port: reach })}=${endpointText({ path: sock })}`);
  }

  // Inside new mount, PID, UTS and network namespaces: the forwarder, the mounts, then the chroot and the user.
  const root = join(dir, 'root');
  const ready = join(dir, 'forwarder.ready');
  const readOnly = security.readOnlyRootFilesystem === true;
  // Mount points the root needs, made before it turns read-only (as a runtime makes them in the container's layer).
  for (const m of mounts) mkdirSync(resolveIn(rootfs.dir, m.target), { recursive: true });
  if (!existsSync(resolveIn(rootfs.dir, '/etc/hosts'))) writeFileSync(resolveIn(rootfs.dir, '/etc/hosts'), '');
  /** Where a path of the container is seen from the run's mount of the root (symbolic links resolved inside it). */
  const inRoot = (path: string): string => q(join(root, resolveIn(rootfs.dir, path).slice(rootfs.dir.length)));
  const script = [
    'set -euo pipefail',
    `hostname ${q(podName)}`,
    'ip link set lo up',
    `${q(process.execPath)} --import tsx ${q(join(__dirname, 'netns-forward.ts'))} ${q(ready)} ${nsSpecs.map(q).join(' ')} &`,
    `for i in $(seq 200); do [ -e ${q(ready)} ] && break; sleep 0.05; done; [ -e ${q(ready)} ] || { echo 'pod runner: the forwarder did not start' >&2; exit 97; }`,
    `mount --bind ${q(rootfs.dir)} ${q(root)}`,
    ...(readOnly ? [`mount -o remount,bind,ro ${q(root)}`] : []),
    `mount -t proc proc ${q(join(root, 'proc'))}`,
    `mount -t sysfs -o ro sysfs ${q(join(root, 'sys'))}`,
    `mount -t tmpfs -o mode=755,nosuid,size=65536k tmpfs ${q(join(root, 'dev'))}`,
    `for d in null zero full random urandom tty; do touch ${q(join(root, 'dev'))}/$d; mount --bind /dev/$d ${q(join(root, 'dev'))}/$d; done`,
    `mkdir ${q(join(root, 'dev/shm'))} && mount -t tmpfs -o nosuid,nodev,noexec,size=65536k shm ${q(join(root, 'dev/shm'))}`,
    `ln -s /proc/self/fd ${q(join(root, 'dev/fd'))}; ln -s /proc/self/fd/0 ${q(join(root, 'dev/stdin'))}; ln -s /proc/self/fd/1 ${q(join(root, 'dev/stdout'))}; ln -s /proc/self/fd/2 ${q(join(root, 'dev/stderr'))}`,
    `touch ${q(join(root, 'dev/termination-log'))} && mount --bind ${q(join(dir, 'termination-log'))} ${q(join(root, 'dev/termination-log'))}`,
    `mount --bind ${q(join(dir, 'hosts'))} ${inRoot('/etc/hosts')}`,
    ...mounts.map((m) => `mount --bind ${q(m.source)} ${inRoot(m.target)}${m.readOnly ? ` && mount -o remount,bind,ro ${inRoot(m.target)}` : ''}`),
    `exec env -i ${Object.entries(env).map(([k, v]) => q(`${k}=${v}`)).join(' ')} /usr/bin/unshare --root=${q(root)} --wd=${q(workingDir)} -- ` +
      `/usr/bin/setpriv --reuid=${uid} --regid=${gid} --groups=${gid} --inh-caps=-all --bounding-set=${boundingArg}` +
      `${security.allowPrivilegeEscalation === false ? ' --no-new-privs' : ''} -- ${argv.map(q).join(' ')}`,
  ].join('\n');
  writeFileSync(join(dir, 'run.sh'), `${script}\n`);
  if (!existsSync(join(rootfs.dir, 'usr/bin/setpriv'))) throw new Error(`the image ${rootfs.image} has no /usr/bin/setpriv (util-linux), which the pod runner starts the entry point with`);

  const spawnedAt = Date.now();
  const server = startServer(`pod ${podName}`, '/usr/bin/unshare', ['--mount', '--pid', '--fork', '--uts', '--net', '--kill-child', 'bash', join(dir, 'run.sh')], join(dir, 'pod.log'), { cwd: REPO });
  const pid = (): number | undefined => {
    const outer = server.process.pid;
    if (outer === undefined || server.exited() !== undefined) return undefined;
    try {
      const children = readdirSync(`/proc/${outer}/task`).flatMap((t) => readFileSync(`/proc/${outer}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
      return children.length > 0 ? Number(children[0]) : undefined;
    } catch {
      return undefined;
    }
  };
  const closeHost = () => hostSide.forEach((s) => s.close());
  const gone = new Promise<void>((done) => server.process.once('exit', () => done()));
  void gone.then(closeHost);
  const signal = async (sig: NodeJS.Signals, graceMs: number): Promise<string | undefined> => {
    const target = pid();
    if (target !== undefined) {
      try {
        process.kill(target, sig);
      } catch {
        // Already gone.
      }
    }
    const timer = setTimeout(() => {
      const again = pid();
      if (again !== undefined) process.kill(again, 'SIGKILL');
      server.process.kill('SIGKILL');
    }, graceMs);
    await gone;
    clearTimeout(timer);
    return server.exited();
  };
  return {
    name: podName,
    server,
    ports,
    spawnedAt,
    volumes,
    process: { argv, env, uid, gid, workingDir },
    pid,
    stop: (graceMs = 30_000) => signal('SIGTERM', graceMs),
    kill: () => signal('SIGKILL', 5_000),
  };
}

/** A pod name as a Deployment's ReplicaSet makes it: `<deployment>-<template hash>-<5 characters>`. */
export function podNameOf(deployment: string, templateHash: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return `${deployment}-${templateHash}-${Array.from(randomBytes(5), (b) => alphabet[b % alphabet.length]).join('')}`;
}
