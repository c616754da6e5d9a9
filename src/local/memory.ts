/**
 * In-memory ports: a secret store and a delivery target that live as long as the process. Used by the demo, the Pulumi
 * provider within one call, and unit tests. Nothing survives a crash, which is what the crash-safe minting order is for.
 */
import { generateSecret } from '../lifecycle/secret';
import type { DeliveryPort, ParkedGeneration, SecretData, SecretStore } from '../lifecycle/ports';

export class MemorySecretStore implements SecretStore {
  private readonly secrets = new Map<number, string>();
  private readonly failures = new Map<number, string>();
  /** The credential each adopting generation adopted (issue 49). */
  private readonly adopted = new Map<number, string>();

  constructor(initial: Iterable<[number, string]> = []) {
    for (const [generation, secret] of initial) this.secrets.set(generation, secret);
  }

  async list(): Promise<ParkedGeneration[]> {
    const generations = new Set([...this.secrets.keys(), ...this.failures.keys()]);
    return [...generations].map((generation) => ({
      generation,
      parked: this.secrets.has(generation),
      ...(this.failures.has(generation) ? { failure: this.failures.get(generation) as string } : {}),
      ...(this.adopted.has(generation) ? { adopted: this.adopted.get(generation) as string } : {}),
    }));
  }

  async adopt(generation: number, secret: string, credentialId: string): Promise<void> {
    this.secrets.set(generation, secret);
    this.adopted.set(generation, credentialId);
  }

  async park(generation: number): Promise<void> {
    if (!this.secrets.has(generation)) this.secrets.set(generation, generateSecret());
  }

  async read(generation: number): Promise<string | undefined> {
    return this.secrets.get(generation);
  }

  async recordFailure(generation: number, message: string): Promise<void> {
    this.failures.set(generation, message);
  }

  async discard(generation: number): Promise<void> {
    this.secrets.delete(generation);
    this.failures.delete(generation);
    this.adopted.delete(generation);
  }

  /** The parked secrets, for a face that persists them itself (the Pulumi provider's state). */
  entries(): [number, string][] {
    return [...this.secrets.entries()];
  }

  /** The credential a generation adopted, for a face that persists it itself. */
  adoptedBy(generation: number): string | undefined {
    return this.adopted.get(generation);
  }
}

/** A delivery target that keeps the last document written. */
export class MemoryDelivery implements DeliveryPort {
  data?: SecretData;

  constructor(private readonly onWrite?: (data: SecretData) => void) {}

  async read(): Promise<{ owned: boolean; data: Record<string, string> } | undefined> {
    return this.data ? { owned: true, data: { ...this.data } } : undefined;
  }

  async write(data: SecretData): Promise<void> {
    this.data = { ...data };
    this.onWrite?.(data);
  }

  async remove(): Promise<void> {
    this.data = undefined;
  }
}
