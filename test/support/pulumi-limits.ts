/**
 * Every text input of the Pulumi resource and its length limit, as docs/reference/pulumi.md states them (the reading system's own:
 * Keystone's, OpenBao's, the ControlPlane's bounds): written here by hand from the docs, not read from the code, so the
 * e2e tests that feed each input one character too many check the code against the documented contract.
 */
export const TEXT_INPUT_LIMITS: Readonly<Record<string, number>> = {
  'connection.cloud': 255,
  'connection.authUrl': 2048,
  'connection.userName': 255,
  'connection.userId': 64,
  'connection.userDomainName': 64,
  'connection.userDomainId': 64,
  'connection.password': 4096,
  'connection.projectName': 64,
  'connection.projectId': 64,
  'connection.projectDomainName': 64,
  'connection.projectDomainId': 64,
  'connection.caBundle': 1024 * 1024,
  'connection.regionName': 255,
  'rotation.interval': 64,
  'rotation.gracePeriod': 64,
  cloudName: 255,
  'backup.address': 2048,
  'backup.token': 1024 * 1024,
  'backup.mount': 1024 * 1024,
  'backup.path': 1024 * 1024,
  'backup.namespace': 1024 * 1024,
};
