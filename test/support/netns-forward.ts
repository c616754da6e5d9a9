/**
 * TCP across network namespaces, for the pods of test/support/pod.ts: a pod has a network namespace of its own (its
 * ports are its own, as on a node), and the test's servers listen on the host's 127.0.0.1. A Unix socket in the file
 * system belongs to no network namespace, so each connection crosses as two hops: a listener on one side hands it to a
 * Unix socket, a listener on that socket connects on the other side.
 *
 * Run as a program inside the namespace (`node netns-forward.ts <ready file> <spec>...`), where each spec is
 * `tcp:<port>=unix:<path>` (listen on 127.0.0.1:<port> there, connect to the socket) or `unix:<path>=tcp:<port>`
 * (listen on the socket, connect to 127.0.0.1:<port> there); it writes the ready file once every listener listens. The
 * host's halves run in the test's process through {@link forward}.
 */
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** One end: a TCP port on 127.0.0.1 or a Unix socket path. */
export type Endpoint = { readonly port: number } | { readonly path: string };

function parse(text: string): Endpoint {
  const [kind, value] = [text.slice(0, text.indexOf(':')), text.slice(text.indexOf(':') + 1)];
  if (kind === 'tcp' && /^\d+$/.test(value)) return { port: Number(value) };
  if (kind === 'unix' && value) return { path: value };
  throw new Error(`not an endpoint: ${text} (tcp:<port> or unix:<path>)`);
}

/** `tcp:<port>` or `unix:<path>`, as the program's arguments spell an endpoint. */
export function endpointText(endpoint: Endpoint): string {
  return 'port' in endpoint ? `tcp:${endpoint.port}` : `unix:${endpoint.path}`;
}

function open(endpoint: Endpoint): Socket {
  return 'port' in endpoint ? connect(endpoint.port, '127.0.0.1') : connect(endpoint.path);
}

/** Listens on `from` and pipes every connection to a new connection to `to`; resolves once listening. */
export function forward(from: Endpoint, to: Endpoint): Promise<Server> {
  const server = createServer((inbound) => {
    const outbound = open(to);
    inbound.pipe(outbound).pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end).on('close', end);
    outbound.on('error', end).on('close', end);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const ready = () => {
      server.off('error', reject);
      resolve(server);
    };
    if ('port' in from) server.listen(from.port, '127.0.0.1', ready);
    else server.listen(from.path, ready);
  });
}

async function main(args: readonly string[]): Promise<void> {
  const [ready, ...specs] = args;
  if (!ready || specs.length === 0) throw new Error('usage: netns-forward.ts <ready file> <listen>=<connect>...');
  for (const spec of specs) {
    const [from, to] = spec.split('=');
    await forward(parse(from), parse(to));
  }
  writeFileSync(ready, `${process.pid}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`netns-forward: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
