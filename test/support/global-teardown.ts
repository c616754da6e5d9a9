import { stopAll } from './run-state';

/** Jest global teardown: stops what the global setup started. */
export default async function globalTeardown(): Promise<void> {
  await stopAll();
}
