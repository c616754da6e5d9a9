/** Throwaway TLS material for tests: a self-signed P-256 certificate made by openssl. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate (PEM) and its key; `ip`: the subjectAltName it is valid for, so a server can use it. */
export function selfSigned(subject: string, ip?: string): { readonly cert: string; readonly key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kac-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', `/CN=${subject}`,
      ...(ip ? ['-addext', `subjectAltName=IP:${ip}`] : []),
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
