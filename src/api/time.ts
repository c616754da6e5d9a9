/**
 * `metav1.Time` serializes as RFC 3339 with whole seconds; the API server drops anything finer. Every face writes times
 * through these helpers so the status reads the same everywhere, rounding so that nothing happens early: a deadline
 * (`nextRotation`, `previousCredentialDeleteAt`) rounds up, an instant that happened (`lastRotation`) rounds down.
 */

/** RFC 3339, whole seconds, rounded down. */
export function formatTime(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339, whole seconds, rounded up: for deadlines. */
export function formatDeadline(date: Date): string {
  return new Date(Math.ceil(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
