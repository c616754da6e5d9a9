/**
 * The local face: one order whose parked secrets, delivered document and status live in a directory, against a real
 * Keystone. The demo runs it; the crash tests kill it mid-pass and run it again.
 */
import { join } from 'node:path';
import type { KeystoneApplicationCredentialStatus } from '../api';
import { credentialPort, deliveredData, isTerminalCreateError } from '../keystone/credential-port';
import type { KeystoneSession } from '../keystone/session';
import type { Ports } from '../lifecycle/ports';
import { DirectoryDelivery, DirectorySecretStore, DirectoryStatus, ownerOf } from './directory';

/** What {@link directoryPorts} needs. */
export interface DirectoryPortsOptions {
  /** The order's directory: `secrets/`, `delivered.json`, `status.json`. */
  readonly dir: string;
  /** The ordered user's session, scoped to the ordered project. */
  readonly session: KeystoneSession;
  /** The order's name prefix (see `childPrefix`). */
  readonly prefix: string;
  /** Region written into the delivered clouds.yaml. @default omitted */
  readonly regionName?: string;
}

/** The ports of one local order, and its recorded status. */
export interface DirectoryOrder {
  readonly ports: Ports;
  /**
   * The order's owner id (src/lifecycle/ownership.ts), drawn once and kept in the directory (`owner`) before anything
   * is minted, as an order's uid exists before its first credential.
   */
  readonly owner: string;
  /** The status as last recorded. */
  status(): KeystoneApplicationCredentialStatus;
  /** Set once teardown released the order. */
  released: boolean;
}

export function directoryPorts(options: DirectoryPortsOptions): DirectoryOrder {
  const statusFile = new DirectoryStatus(options.dir);
  const order: DirectoryOrder = {
    released: false,
    owner: ownerOf(options.dir),
    status: () => statusFile.read(),
    ports: {
      keystone: credentialPort(options.session, options.prefix),
      secrets: new DirectorySecretStore(join(options.dir, 'secrets')),
      delivery: new DirectoryDelivery(options.dir),
      render: (id, secret) => deliveredData({ authUrl: options.session.authUrl, ...(options.regionName ? { regionName: options.regionName } : {}) }, id, secret),
      writeStatus: (status) => statusFile.write(status),
      release: async () => {
        order.released = true;
      },
      isTerminal: isTerminalCreateError,
    },
  };
  return order;
}
