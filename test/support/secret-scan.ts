/**
 * The secrets scan of the reliability suites (issue 13, "Secrets"): every operator log line, Event, status read and
 * state file a suite collected is searched for every secret the suite saw (the minted application-credential secrets
 * read from the delivered Secrets, the admin password). A secret may leak as it is, base64-encoded (a Secret's `data`
 * or a dumped object), JSON-escaped (a quoted string in a log line) or URL-encoded (a query string), so each form is
 * searched.
 *
 * Usage: `expect(scanForSecrets(collected, seen)).toEqual([])` — the result names the sources that leaked.
 */

/** Secrets shorter than this are refused: a scan for a 3-character "secret" matches by chance and proves nothing. */
export const MIN_SECRET_LENGTH = 8;

/** The forms in which `secret` could appear in a text. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  forms.add(Buffer.from(secret, 'utf8').toString('base64'));
  // base64 without padding, and base64url: what a JWT-ish or URL-safe encoder writes.
  forms.add(Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, ''));
  forms.add(Buffer.from(secret, 'utf8').toString('base64url'));
  forms.add(JSON.stringify(secret).slice(1, -1));
  forms.add(encodeURIComponent(secret));
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * Searches every text for every secret (in each form of `secretForms`) and returns the sources of the texts that
 * contain one, each once, in the order met. The secrets themselves are never returned (the caller prints the result).
 * Empty secrets are skipped; a non-empty secret shorter than MIN_SECRET_LENGTH is an error (the scan could not fail
 * for the right reason).
 */
export function scanForSecrets(
  texts: Iterable<{ source: string; text: string }>,
  secrets: Iterable<string>,
): string[] {
  const forms: string[] = [];
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new Error(`scanForSecrets: a secret of ${secret.length} characters is too short to scan for (min ${MIN_SECRET_LENGTH})`);
    }
    forms.push(...secretForms(secret));
  }
  const offending: string[] = [];
  const seen = new Set<string>();
  for (const { source, text } of texts) {
    if (seen.has(source)) continue;
    if (forms.some((form) => text.includes(form))) {
      seen.add(source);
      offending.push(source);
    }
  }
  return offending;
}
