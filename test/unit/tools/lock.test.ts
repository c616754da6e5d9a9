/**
 * The lock the builds and caches share (tools/lock.ts): one holder at a time, a dead holder's lock taken over, a wait
 * bounded when asked, and the lock gone when the body settles, whether it returned or threw.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, withLock } from '../../../tools/lock';

describe('withLock', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kac-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one holder in at a time; the second waits for the first to finish', async () => {
    const lock = join(dir, 'a.lock');
    const seen: string[] = [];
    const body = (name: string) => async () => {
      seen.push(`${name} in`);
      await new Promise((r) => setTimeout(r, 700));
      seen.push(`${name} out`);
      return name;
    };
    const waits: string[] = [];
    const results = await Promise.all([withLock(lock, body('one')), withLock(lock, body('two'), { log: (line) => waits.push(line) })]);
    expect(results).toEqual(['one', 'two']);
    expect(seen).toEqual(['one in', 'one out', 'two in', 'two out']);
    expect(waits).toEqual([`waiting for ${lock}, held by process ${process.pid} ...`]);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over the lock of a holder that died', async () => {
    const lock = join(dir, 'b.lock');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    expect(alive(Number(dead))).toBe(false);
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), dead);
    await expect(withLock(lock, async () => 'taken', { timeoutMs: 5_000 })).resolves.toBe('taken');
  });

  it('gives up after timeoutMs on a holder that lives, naming the lock', async () => {
    const lock = join(dir, 'c.lock');
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    await expect(withLock(lock, async () => 'never', { timeoutMs: 600 })).rejects.toThrow(`the lock ${lock} was not released within 600 ms`);
    expect(existsSync(lock)).toBe(true);
  });

  it('releases the lock when the body throws', async () => {
    const lock = join(dir, 'd.lock');
    await expect(withLock(lock, async () => Promise.reject(new Error('body failed')))).rejects.toThrow('body failed');
    expect(existsSync(lock)).toBe(false);
  });
});
