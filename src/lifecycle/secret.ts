import { randomBytes } from 'node:crypto';

/** Bytes of entropy in a generated secret: 256 bits. */
export const SECRET_BYTES = 32;

/**
 * A fresh application-credential secret: 256 crypto-random bits, base64url (43 characters, below bcrypt's 72-byte limit,
 * so Keystone hashes all of it).
 */
export function generateSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}
