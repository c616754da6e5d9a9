// @needs image
/**
 * The image's bill of materials (tools/sbom.ts, `npm run release:artifacts -- --sbom DIR --image REF`) from the image
 * the Dockerfile builds: every installed Debian package of the image's dpkg database (as `dpkg-query --admindir` reads
 * it, version for version), the Node.js runtime the image runs, and the /app tree's production packages as
 * `npm ls --omit=dev` reads them in the image, no more; the package's own entry names keystone-appcred.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { imageSbom } from '../../tools/sbom';
import { npmLs } from '../support/npm-ls';
import { mountImage, type ImageRootfs } from '../support/pod';

jest.setTimeout(300_000);

const IMAGE = process.env.KAC_IMAGE as string;
let rootfs: ImageRootfs;

beforeAll(async () => {
  rootfs = await mountImage(IMAGE);
});
afterAll(async () => {
  await rootfs?.remove();
});

describe("the image's SBOM", () => {
  it("lists the image's Debian packages, its Node.js and its app's production packages", () => {
    const bom = imageSbom(rootfs.dir, IMAGE, '0.0.0-test');
    const listed = (prefix: string): Set<string> => new Set(bom.components.filter((c) => String(c.purl).startsWith(prefix)).map((c) => `${c.name}@${c.version}`));
    const dpkg = execFileSync('dpkg-query', ['--admindir', join(rootfs.dir, 'var', 'lib', 'dpkg'), '-W', '-f', '${db:Status-Status} ${Package}@${Version}\n'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.startsWith('installed '))
      .map((line) => line.slice('installed '.length));
    expect(listed('pkg:deb/debian/')).toEqual(new Set(dpkg));
    expect(dpkg.length).toBeGreaterThan(50);
    const node = execFileSync(join(rootfs.dir, 'usr', 'local', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim().slice(1);
    expect(listed('pkg:generic/node@')).toEqual(new Set([`node@${node}`]));
    const app = npmLs(join(rootfs.dir, 'app'));
    expect(listed('pkg:npm/')).toEqual(new Set([...app, `keystone-appcred@${String(bom.components.find((c) => c.name === 'keystone-appcred')?.version)}`]));
    expect(bom.metadata.component).toMatchObject({ type: 'container', name: IMAGE.replace(/:[^/:]+$/, '') });
  });
});
