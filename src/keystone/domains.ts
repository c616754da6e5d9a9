/**
 * Domains (`/v3/domains`), read with an admin session: the identity plane creates users and projects in the domain a
 * ControlPlane names (`adminCredential.domainName`), and Keystone's user and project APIs take a domain id.
 */
import { Reply } from './reply';
import type { KeystoneSession } from './session';

/** A Keystone domain. */
export interface Domain {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
}

/** Finds domains (admin session). */
export class Domains {
  constructor(private readonly session: KeystoneSession) {}

  /** The domain with this exact name, or `undefined`. */
  async findByName(name: string): Promise<Domain | undefined> {
    const path = this.session.transport.pathOf('domains');
    const response = await this.session.request({ method: 'GET', path: `${path}?name=${encodeURIComponent(name)}` });
    return Reply.list({ method: 'GET', path }, response.body, 'domains')
      .map((d) => ({ id: d.string('id'), name: d.string('name'), enabled: d.optionalBoolean('enabled') ?? true }))
      .find((d) => d.name === name);
  }
}
