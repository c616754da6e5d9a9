/**
 * The parked secrets of a KeystoneApplicationCredential on the cluster: one `<prefix>-secret-v<N>` Secret per generation
 * in the ControlPlane's namespace, key `value`, carrying the three labels of the spec's "Projected child names" (the
 * cluster label empty on the management cluster). A generation's secret is generated once and created with a plain
 * create, never an apply: a cache that lags behind an earlier park must not replace a secret Keystone already holds.
 */
import { childName, type OrderLocation } from '../../api';
import type { ParkedGeneration, SecretStore } from '../../lifecycle/ports';
import { generateSecret } from '../../lifecycle/secret';
import { childLabels } from '../../plane/naming';
import type { ClusterPort, SecretObject } from '../../plane/ports';

/** The key of a parked secret. */
export const SECRET_VALUE_KEY = 'value';
/** The key that records Keystone's terminal error on a generation (no secret in it). */
export const FAILURE_KEY = 'failure';
/** The key that names the credential a generation adopted (issue 49), beside its secret. */
export const ADOPTED_KEY = 'adopted';

const GENERATION = /-secret-v([1-9]\d*)$/;

/** The `secret-v<N>` children of one order, as a {@link SecretStore}. */
export class ParkedSecrets implements SecretStore {
  private readonly labels: Record<string, string>;
  /** What this store's own parks created (the API server's reply), by generation: the cache may not have them yet. */
  private readonly parked = new Map<number, SecretObject>();

  constructor(
    private readonly cluster: ClusterPort,
    /** The ControlPlane's namespace, where the children live. */
    private readonly namespace: string,
    private readonly prefix: string,
    location: OrderLocation,
    private readonly newSecret: () => string = generateSecret,
  ) {
    this.labels = childLabels('KeystoneApplicationCredential', location);
  }

  /** The child Secret's name of generation N. */
  nameOf(generation: number): string {
    return childName(this.prefix, `secret-v${generation}`);
  }

  async list(): Promise<ParkedGeneration[]> {
    const out: ParkedGeneration[] = [];
    for (const secret of await this.cluster.listSecrets(this.namespace, this.labels)) {
      const match = secret.metadata.name.startsWith(`${this.prefix}-`) ? GENERATION.exec(secret.metadata.name) : null;
      if (!match) continue;
      const value = secret.data[SECRET_VALUE_KEY];
      const failure = secret.data[FAILURE_KEY];
      const adopted = secret.data[ADOPTED_KEY];
      out.push({ generation: Number(match[1]), parked: value !== undefined && value !== '', ...(failure ? { failure } : {}), ...(adopted ? { adopted } : {}) });
    }
    return out.sort((a, b) => a.generation - b.generation);
  }

  /**
   * Creates generation N's secret. A 409 here never comes from a concurrent pass of the same order: the children's
   * names carry the order's own prefix (its name and a hash of its location), so no other order creates them, and the
   * work queue hands an order's key to one worker at a time, so no two passes of the order run at once, however many
   * workers the controller has. A 409 means the cache has not yet seen this order's earlier park (a pass that crashed
   * or failed after it); `createSecret` then returns the stored value, never the one generated now.
   */
  async park(generation: number): Promise<void> {
    const created = await this.cluster.createSecret({ namespace: this.namespace, name: this.nameOf(generation), labels: this.labels, data: { [SECRET_VALUE_KEY]: this.newSecret() } });
    this.parked.set(generation, created);
  }

  /**
   * Parks the secret of an adopted credential (issue 49) as generation N's, naming the credential; created as a park is,
   * never over an existing child.
   */
  async adopt(generation: number, secret: string, credentialId: string): Promise<void> {
    const created = await this.cluster.createSecret({
      namespace: this.namespace,
      name: this.nameOf(generation),
      labels: this.labels,
      data: { [SECRET_VALUE_KEY]: secret, [ADOPTED_KEY]: credentialId },
    });
    if (created.data[SECRET_VALUE_KEY] !== secret) throw new Error(`generation ${generation} is parked already; not adopting application credential ${credentialId} into it`);
    this.parked.set(generation, created);
  }

  async read(generation: number): Promise<string | undefined> {
    const key = { namespace: this.namespace, name: this.nameOf(generation) };
    // The cache may not have seen a secret parked a moment ago: this store's own park answers for itself, and anything
    // else the cache does not hold (another pass's park it has not caught up with) is asked of the API server.
    const secret = (await this.cluster.getSecret(key)) ?? this.parked.get(generation) ?? (await this.cluster.readSecret(key));
    const value = secret?.data[SECRET_VALUE_KEY];
    return value === '' ? undefined : value;
  }

  async recordFailure(generation: number, message: string): Promise<void> {
    const key = { namespace: this.namespace, name: this.nameOf(generation) };
    const existing = await this.cluster.getSecret(key);
    const value = existing?.data[SECRET_VALUE_KEY];
    // The apply names the value too, so the operator keeps owning it; it never changes a parked value.
    await this.cluster.applySecret({ ...key, labels: this.labels, data: { ...(value !== undefined ? { [SECRET_VALUE_KEY]: value } : {}), [FAILURE_KEY]: message } });
  }

  async discard(generation: number): Promise<void> {
    await this.cluster.deleteSecret({ namespace: this.namespace, name: this.nameOf(generation) });
  }
}
