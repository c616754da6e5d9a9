/**
 * Ports backed by a directory: parked secrets, the delivered document and the order's status as files (mode 0600),
 * written atomically (write to a temp file, then rename) so a crash never leaves half a file. The demo and the crash
 * tests use them: a killed process leaves exactly what it had recorded, as a real store would.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeystoneApplicationCredentialStatus } from '../api';
import { generateSecret } from '../lifecycle/secret';
import type { DeliveryPort, ParkedGeneration, SecretData, SecretStore } from '../lifecycle/ports';

function writeAtomically(path: string, content: string): void {
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, content, { mode: 0o600 });
  renameSync(temp, path);
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Parked secrets as `secret-v<N>` files, failures as `secret-v<N>.failure`. */
export class DirectorySecretStore implements SecretStore {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  async list(): Promise<ParkedGeneration[]> {
    const byGeneration = new Map<number, { parked: boolean; failure?: string }>();
    for (const file of readdirSync(this.dir)) {
      const match = /^secret-v(\d+)(\.failure)?$/.exec(file);
      if (!match) continue;
      const generation = Number(match[1]);
      const entry = byGeneration.get(generation) ?? { parked: false };
      if (match[2]) entry.failure = readOrUndefined(join(this.dir, file)) ?? '';
      else entry.parked = true;
      byGeneration.set(generation, entry);
    }
    return [...byGeneration].map(([generation, e]) => ({ generation, parked: e.parked, ...(e.failure !== undefined ? { failure: e.failure } : {}) }));
  }

  async park(generation: number): Promise<void> {
    if ((await this.read(generation)) === undefined) writeAtomically(join(this.dir, `secret-v${generation}`), generateSecret());
  }

  async read(generation: number): Promise<string | undefined> {
    return readOrUndefined(join(this.dir, `secret-v${generation}`));
  }

  async recordFailure(generation: number, message: string): Promise<void> {
    writeAtomically(join(this.dir, `secret-v${generation}.failure`), message);
  }

  async discard(generation: number): Promise<void> {
    rmSync(join(this.dir, `secret-v${generation}`), { force: true });
    rmSync(join(this.dir, `secret-v${generation}.failure`), { force: true });
  }
}

/** The delivered document as one JSON file. */
export class DirectoryDelivery implements DeliveryPort {
  private readonly path: string;

  constructor(dir: string, name = 'delivered.json') {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.path = join(dir, name);
  }

  async read(): Promise<{ owned: boolean; data: Record<string, string> } | undefined> {
    const text = readOrUndefined(this.path);
    return text === undefined ? undefined : { owned: true, data: JSON.parse(text) as Record<string, string> };
  }

  async write(data: SecretData): Promise<void> {
    writeAtomically(this.path, JSON.stringify(data));
  }

  async remove(): Promise<void> {
    rmSync(this.path, { force: true });
  }
}

/** The order's owner id in the file `owner`: drawn (a random UUID) and written atomically the first time, then read. */
export function ownerOf(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'owner');
  const found = readOrUndefined(path)?.trim();
  if (found) return found;
  writeAtomically(path, randomUUID());
  return (readOrUndefined(path) as string).trim();
}

/** The order's status as one JSON file. */
export class DirectoryStatus {
  private readonly path: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.path = join(dir, 'status.json');
  }

  read(): KeystoneApplicationCredentialStatus {
    const text = readOrUndefined(this.path);
    return text === undefined ? {} : (JSON.parse(text) as KeystoneApplicationCredentialStatus);
  }

  async write(status: KeystoneApplicationCredentialStatus): Promise<void> {
    writeAtomically(this.path, JSON.stringify(status, null, 2));
  }
}
