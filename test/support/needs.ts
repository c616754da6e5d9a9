/**
 * A test file's `@needs` line (docs/testing.md): the words after it, e.g. `// @needs kube keystone release-0.2.0`. Read
 * by the global setup (which components to start), the test environment (which files take a cluster member) and the
 * docs test (the table's `needs` column).
 */
export function needsLine(text: string): string | undefined {
  return /@needs\s+([a-z0-9., -]+)/.exec(text)?.[1].trim();
}

/** The words of a test file's `@needs` line. */
export function needsOf(text: string): string[] {
  return needsLine(text)?.split(/[\s,]+/).filter((w) => w !== '') ?? [];
}
