/**
 * `npm run image`: builds the operator's image from the Dockerfile with buildah (tools/tools/image/build.ts) and prints its name, ID
 * and size. A build of the same inputs is reused; `--no-cache` builds anyway.
 *
 *   npm run image                                    # keystone-appcred:<package version>, base: the registry's, else local
 *   npm run image -- --tag registry.example/keystone-appcred:0.3.0 --base registry
 *   npm run image -- --base local                    # no registry: Debian's mmdebstrap + Node 24 from npm
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { buildImage, formatSize, type BaseChoice } from './build';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(argv: readonly string[]): Promise<void> {
  const cli = new Command('npm run image --')
    .description("build the operator's image from the Dockerfile with buildah (cached by a hash of its inputs)")
    .option('--tag <name>', 'the image name; default keystone-appcred:<package version>')
    .addOption(
      new Option('--base <choice>', 'NODE_IMAGE: registry (the Dockerfile default), local (mmdebstrap + Node 24 from npm), or auto (registry, else local)')
        .choices(['auto', 'registry', 'local'])
        .default('auto'),
    )
    .option('--node-image <ref>', 'an explicit NODE_IMAGE (local or pullable); wins over --base')
    .option('--ca-file <pem>', 'extra CAs for npm inside the build (a TLS-intercepting proxy); default: NODE_EXTRA_CA_CERTS when set', (v: string) => {
      if (!v) throw new InvalidArgumentError('must name a PEM file');
      return v;
    })
    .option('--no-cache', 'build even when the same inputs were built before')
    .parse(argv, { from: 'user' });
  const opts = cli.opts<{ tag?: string; base: BaseChoice; nodeImage?: string; caFile?: string; cache: boolean }>();
  const image = await buildImage({
    tag: opts.tag,
    base: opts.base,
    nodeImage: opts.nodeImage,
    caFile: opts.caFile,
    noCache: !opts.cache,
    log: (line) => process.stderr.write(`[image] ${line}\n`),
  });
  const how = image.cached ? `reused (inputs ${image.hash.slice(0, 12)} built before), ${seconds(image.ms)}` : `built in ${seconds(image.ms)}`;
  process.stdout.write(`${image.tag} ${image.id.slice(0, 12)} ${formatSize(image.sizeBytes)} on ${image.base.ref} (${image.base.source}): ${how}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`npm run image: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
