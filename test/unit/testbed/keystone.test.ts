import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalKeystone } from '../../../src/testbed/keystone';

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
});
