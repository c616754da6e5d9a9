/**
 * The command line as an installed package: `npm pack` (its prepack builds), `npm install <tarball>` into a temporary
 * project outside the repository with none of the optional peer dependencies, then `npx keystone-appcred --help`,
 * `manifests --help`, and `manifests` failing with one line that names the missing peers. The root entry loads there.
 */
import { rmSync } from 'node:fs';
import { newProject, nodeEnv, npmInstall, packDir, packedTarball, run, runOk } from '../support/package';

jest.setTimeout(900_000);

describe('the installed command line', () => {
  let dir: string;

  beforeAll(async () => {
    const tarball = await packedTarball();
    dir = newProject('cli');
    await npmInstall(dir, [tarball]);
  }, 900_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (!process.env.KAC_TEST_WORKDIR) rmSync(packDir(), { recursive: true, force: true });
  });

  // `--no`: never fetch a package of that name from the registry; `--`: the rest is the command's, --help included.
  const npx = (...args: string[]) => run('npx', ['--no', '--', 'keystone-appcred', ...args], { cwd: dir, env: nodeEnv(), timeoutMs: 60_000 });

  it('npx keystone-appcred --help lists the commands', async () => {
    const result = await npx('--help');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: keystone-appcred \[options\] \[command\]/);
    expect(result.stdout).toMatch(/\n {2}demo \[options\]/);
    expect(result.stdout).toMatch(/\n {2}manifests \[options\]/);
    for (const command of ['operator', 'status', 'rotate']) expect(result.stdout).toMatch(new RegExp(`\\n {2}${command} `));
  });

  it('npx keystone-appcred manifests --help lists its options', async () => {
    const result = await npx('manifests', '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: keystone-appcred manifests \[options\]/);
    for (const option of ['--image <IMAGE[:TAG]>', '--openbao-address <url>', '--namespace <name>', '--sample']) expect(result.stdout).toContain(option);
  });

  it.each([
    ['operator', ['--kubeconfig <file>', '--namespace <ns>', '--openbao-address <url>', 'KAC_OPENBAO_TOKEN']],
    ['status', ['--kubeconfig <file>', '--context <name>', '-A, --all-namespaces', '-o, --output <format>']],
    ['rotate', ['--kubeconfig <file>', '--wait', '--timeout <duration>']],
  ])('npx keystone-appcred %s --help documents its options', async (command, options) => {
    const result = await npx(command, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: keystone-appcred ${command} `));
    for (const option of options) expect(result.stdout).toContain(option);
  });

  it('manifests without the cdk8s peers fails with one line naming them, no stack trace', async () => {
    const result = await npx('manifests', '--image', 'registry.example/keystone-appcred:1.0.0');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^keystone-appcred: manifests needs the optional peer dependencies cdk8s, constructs \(\S+ is not installed\): npm install cdk8s constructs\n$/);
  });

  it('a bad option value fails naming the option and the value', async () => {
    const result = await npx('manifests', '--image', 'kac@sha256:00');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("error: option '--image <IMAGE[:TAG]>' argument 'kac@sha256:00' is invalid. digests are not supported; give IMAGE or IMAGE:TAG\n");
  });

  it('the root entry loads without any optional peer dependency', async () => {
    const out = await runOk(process.execPath, ['-e', "const k = require('keystone-appcred'); process.stdout.write(typeof k.decide + ' ' + typeof k.validate)"], { cwd: dir });
    expect(out).toBe('function function');
  });
});
