export { passwords } from './config';
export { ensureKeystoneInstalled } from './install';
export * from './server';
