/**
 * The registry of what must hold in every simulated run, checked after every step (../run.ts). Each entry is an
 * {@link Invariant} (../model.ts). A new mechanism adds its invariants here in the same change (docs/testing.md, "The
 * simulation").
 */
import type { Invariant } from '../model';
import { backupHoldsDelivered } from './backup';
import { atMostTwo, foreignUntouched, held, swept } from './credentials';
import { adoptionMintsNothing, retainKeepsDelivered, revokeAfterSuccessor, revokeFiresOnce, secretOneGeneration } from './delivery';
import { outageRate, recovery } from './dependencies';
import { adminExpiryKept, reasonSeries } from './observability';
import { defaultsResolved, forcedNeverWaits, nextRotationBounded, scheduledOnTime } from './policy';
import { backoffOnOverload, bystanderServed, fleetProgresses, inFlightWithinLimit, spareKept } from './keystone';
import { restartFree } from './restart';
import { refusedCostsNothing } from './secret-access';
import { noSecretLeaks } from './secrets';

export const INVARIANTS: readonly Invariant[] = [held, foreignUntouched, atMostTwo, backupHoldsDelivered, swept, restartFree, recovery, outageRate, reasonSeries, adminExpiryKept, refusedCostsNothing, noSecretLeaks, retainKeepsDelivered, revokeAfterSuccessor, secretOneGeneration, revokeFiresOnce, adoptionMintsNothing, scheduledOnTime, nextRotationBounded, forcedNeverWaits, defaultsResolved, inFlightWithinLimit, spareKept, backoffOnOverload, fleetProgresses, bystanderServed];
