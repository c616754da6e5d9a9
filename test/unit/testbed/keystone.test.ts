import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passwords, startLocalKeystone } from '../../../src/testbed/keystone';

describe('startLocalKeystone options', () => {
  test.each([3, 32, 4.5])('rejects bcryptRounds %p before touching anything', async (bcryptRounds) => {
    const parent = mkdtempSync(join(tmpdir(), 'kac-testbed-'));
    try {
      const dir = join(parent, 'keystone');
      await expect(startLocalKeystone({ dir, bcryptRounds })).rejects.toThrow(
        `local keystone: bcryptRounds (${bcryptRounds}) must be an integer from 4 to 31`,
      );
      expect(existsSync(dir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  test.each([0, 65, 1.5])('rejects processes %p before touching anything', async (processes) => {
    const parent = mkdtempSync(join(tmpdir(), 'kac-testbed-'));
    try {
      const dir = join(parent, 'keystone');
      await expect(startLocalKeystone({ dir, processes })).rejects.toThrow(`local keystone: processes (${processes}) must be an integer from 1 to 64`);
      expect(existsSync(dir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe('the testbed admin password', () => {
  // `keystone-manage bootstrap --bootstrap-password <p>` takes a password starting with '-' for an option and fails;
  // base64url began with '-' about one start in 64.
  test('never starts with "-": 20000 generated passwords start with a letter and are alphanumeric', () => {
    const generated = Array.from({ length: 20_000 }, () => passwords.generate());
    expect(generated.filter((p) => p.startsWith('-'))).toEqual([]);
    expect(generated.filter((p) => !/^[A-Za-z][A-Za-z0-9]{31}$/.test(p))).toEqual([]);
  });

  test('is random: 1000 generated passwords are all different and use every leading letter class', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => passwords.generate()));
    expect(seen.size).toBe(1000);
    const first = [...seen].map((p) => p[0]);
    expect(first.some((c) => /[a-z]/.test(c)) && first.some((c) => /[A-Z]/.test(c))).toBe(true);
  });

  test('is the generator startLocalKeystone bootstraps the admin with', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'kac-testbed-'));
    const generate = jest.spyOn(passwords, 'generate').mockImplementation(() => {
      throw new Error('sentinel: the testbed asked for its admin password');
    });
    try {
      await expect(startLocalKeystone({ dir: join(parent, 'keystone') })).rejects.toThrow('sentinel: the testbed asked for its admin password');
      expect(generate).toHaveBeenCalledTimes(1);
    } finally {
      generate.mockRestore();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
