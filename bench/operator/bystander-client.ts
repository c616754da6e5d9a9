/**
 * The bystander: another user of Keystone, in a process of its own (so the bench's own work never delays its timing),
 * logging in with its password in a loop, a pause between logins, straight to Keystone (no proxy). Each login is one
 * JSON line on stdout: when it started (epoch ms), how long it took (ms) and its HTTP status. Its settings come from
 * the environment (KAC_BYSTANDER_URL, _USER, _PROJECT, _PAUSE_MS), the password on stdin; it runs until it is stopped.
 *
 *   node --import tsx bench/operator/bystander-client.ts < password
 */
import { setTimeout as sleep } from 'node:timers/promises';

async function main(): Promise<void> {
  const password = await new Promise<string>((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text.trim()));
  });
  const url = process.env.KAC_BYSTANDER_URL as string;
  const pauseMs = Number(process.env.KAC_BYSTANDER_PAUSE_MS ?? 1000);
  const body = JSON.stringify({
    auth: {
      identity: { methods: ['password'], password: { user: { name: process.env.KAC_BYSTANDER_USER, domain: { name: 'Default' }, password } } },
      scope: { project: { name: process.env.KAC_BYSTANDER_PROJECT, domain: { name: 'Default' } } },
    },
  });
  for (;;) {
    const at = Date.now();
    const t0 = performance.now();
    let status = 0;
    try {
      const res = await fetch(`${url}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      // no answer: status 0
    }
    process.stdout.write(`${JSON.stringify({ at, ms: performance.now() - t0, status })}\n`);
    await sleep(pauseMs);
  }
}

void main();
