/**
 * The version a user can see: `keystone-appcred --version`, the operator's `keystone_appcred_build_info` gauge, both the
 * version in package.json (issue 41).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { program } from '../../../src/cli/main';
import { packageVersion } from '../../../src/cli/version';
import { OperatorMetrics } from '../../../src/operator/runtime/metrics';

const REPO = join(__dirname, '..', '..', '..');
const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

describe('the version', () => {
  it('is package.json\'s, a semver', () => {
    expect(packageVersion()).toBe(version);
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });

  it.each([['--version'], ['-V']])('keystone-appcred %s prints it and exits 0', async (flag) => {
    let out = '';
    const cli = program().exitOverride().configureOutput({ writeOut: (s) => (out += s) });
    await expect(cli.parseAsync(['node', 'keystone-appcred', flag])).rejects.toMatchObject({ code: 'commander.version', exitCode: 0 });
    expect(out).toBe(`${version}\n`);
  });

  it('is the keystone_appcred_build_info gauge\'s version label, with the value 1', async () => {
    const text = await new OperatorMetrics({ defaultMetrics: false, version }).text();
    expect(text).toContain(`keystone_appcred_build_info{version="${version}"} 1`);
    expect(await new OperatorMetrics({ defaultMetrics: false }).text()).not.toContain('keystone_appcred_build_info');
  });
});
