/**
 * A world for a driver's pass: the fakes with a ControlPlane and its admin Secret.
 */
import type { ControlPlane } from '../../../../src/api';
import type { PlaneDeps } from '../../../../src/plane';
import { FakeCluster } from './cluster';
import { FakeKeystone } from './keystone';
import { CP_NS, T0, adminCloudsYaml, adminReady, controlPlane } from './objects';

/** A world: a fake cluster with a ControlPlane (admin ready) and its admin Secret, and a fake Keystone. */
export function plane(options: { cp?: ControlPlane; ready?: boolean } = {}) {
  const cluster = new FakeCluster();
  const keystone = new FakeKeystone();
  cluster.put('ControlPlane', { ...(options.cp ?? controlPlane()), ...(options.ready === false ? {} : { status: adminReady() }) });
  cluster.putSecret({ metadata: { name: 'admin-cloud', namespace: CP_NS }, data: { 'clouds.yaml': adminCloudsYaml() } });
  let n = 0;
  const deps: PlaneDeps = { cluster, keystone, clock: () => T0, newPassword: () => `pw-${++n}` };
  return { cluster, keystone, deps };
}
