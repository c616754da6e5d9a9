/**
 * Warnings from the provider process to the Pulumi engine, which prints them in the `pulumi up` / `preview` output as
 * `warning:` diagnostics (on the resource, when its URN is known). Both faces run in a process the engine started with
 * its own address as the first argument that is not a flag (the provider plugin, and the dynamic providers' host);
 * `@pulumi/pulumi`'s own `log.warn` does not reach the engine from such a process (it knows no engine address there),
 * so the engine's Log call is made here. Where it cannot be (no address, the gRPC modules not resolvable), the warning
 * goes to stderr, which the engine shows as the provider's output.
 */

/** Sends one warning; never throws. */
export type Warn = (message: string, urn?: string) => Promise<void>;

/**
 * The engine's address among a provider process's arguments: the first that is not a flag (skipped as
 * `@pulumi/pulumi/provider` skips them), when it is a `host:port`.
 */
export function engineAddressOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--tracing') i++;
    else if (!arg.startsWith('-')) return /^[^\s/]+:\d+$/.test(arg) ? arg : undefined;
  }
  return undefined;
}

interface LogRequest {
  setSeverity(severity: number): void;
  setMessage(message: string): void;
  setUrn(urn: string): void;
}
interface EngineClient {
  log(request: LogRequest, callback: (error: Error | null) => void): void;
}

/** A {@link Warn} over the engine at the address in `args` (default: this process's arguments). */
export function engineWarn(args: readonly string[] = process.argv.slice(2)): Warn {
  const address = engineAddressOf(args);
  let client: EngineClient | undefined;
  const toStderr = (message: string): void => {
    process.stderr.write(`warning: ${message}\n`);
  };
  return async (message, urn) => {
    if (address === undefined) return toStderr(message);
    try {
      // Loaded on first use only: a warning is rare, and the dynamic resource's module must load without them.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const grpc = require('@grpc/grpc-js') as { credentials: { createInsecure(): unknown } };
      const services = require('@pulumi/pulumi/proto/engine_grpc_pb') as { EngineClient: new (address: string, credentials: unknown) => EngineClient };
      const messages = require('@pulumi/pulumi/proto/engine_pb') as { LogRequest: new () => LogRequest; LogSeverity: { WARNING: number } };
      /* eslint-enable @typescript-eslint/no-require-imports */
      client ??= new services.EngineClient(address, grpc.credentials.createInsecure());
      const request = new messages.LogRequest();
      request.setSeverity(messages.LogSeverity.WARNING);
      request.setMessage(message);
      if (urn !== undefined) request.setUrn(urn);
      const engine = client;
      await new Promise<void>((resolve, reject) => engine.log(request, (error) => (error ? reject(error) : resolve())));
    } catch {
      toStderr(message);
    }
  };
}
