/**
 * Running the build's programs (buildah, mmdebstrap, npm): output kept for the error, progress passed on, a failure
 * thrown with the command, its exit status and the last lines it printed.
 */
import { spawn } from 'node:child_process';

export interface ExecOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Each line the program prints (stdout and stderr), as it prints it. */
  readonly onLine?: (line: string) => void;
  /** @default 60 minutes */
  readonly timeoutMs?: number;
}

/** A program that failed: the command, the exit status and the tail of its output. */
export class ExecError extends Error {
  override readonly name = 'ExecError';
  constructor(
    readonly command: string,
    readonly status: number | null,
    readonly output: string,
  ) {
    super(`${command} failed (${status === null ? 'killed' : `exit status ${status}`}):\n${output.split('\n').slice(-30).join('\n')}`);
  }
}

/** Runs `program args`; resolves with its stdout, rejects with an {@link ExecError}. */
export function exec(program: string, args: readonly string[], options: ExecOptions = {}): Promise<string> {
  const command = [program, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(program, [...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    const lines = (chunk: string, pending: { text: string }) => {
      pending.text += chunk;
      const parts = pending.text.split('\n');
      pending.text = parts.pop() ?? '';
      for (const line of parts) options.onLine?.(line);
    };
    const out = { text: '' };
    const err = { text: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      output += d;
      lines(d, out);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      lines(d, err);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 3_600_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new ExecError(command, null, `${output}\n${error.message}`));
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      for (const rest of [out.text, err.text]) if (rest) options.onLine?.(rest);
      if (status === 0) resolve(stdout);
      else reject(new ExecError(command, status, output));
    });
  });
}
