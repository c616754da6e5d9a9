/**
 * The jsii package of the construct library (`keystone-appcred-cdk8s`) from the command line:
 *
 *   tsx tools/jsii/main.ts build [LANGUAGE ...]  `npm run jsii`: the assembly, every language this machine can build
 *                                                (python, go, java; dotnet where `dotnet` is on PATH) or the ones
 *                                                named, and the API reference per language; cached by the hash of the
 *                                                inputs (tools/jsii/build.ts). lib/jsii links to the build: lib/jsii/
 *                                                dist/{python,go,java,js}, lib/jsii/go (the Go modules), lib/jsii/java
 *                                                (the local Maven repository), lib/jsii/docs/API.<language>.md
 *   tsx tools/jsii/main.ts diff                  `npm run jsii:diff`: jsii-diff against docs/api/keystone-appcred-cdk8s.jsii
 *   tsx tools/jsii/main.ts baseline              `npm run jsii:baseline`: accept the current API as the record
 *
 * Paths and times go to stderr.
 */
import { existsSync, lstatSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildJsii, LANGUAGES, sizeOf, type JsiiBuild, type Language } from './build';
import { apiDiff, writeBaseline } from './diff';
import { JSII_NAMES, ROOT } from './package';

const say = (line: string): void => void process.stderr.write(`${line}\n`);

/** Points lib/jsii at the build: dist/, docs/, and go/ and java/ where the examples' go.mod and pom.xml look. */
function link(build: JsiiBuild): string {
  const lib = join(ROOT, 'lib', 'jsii');
  rmSync(lib, { recursive: true, force: true });
  mkdirSync(lib, { recursive: true });
  const place = (target: string, name: string) => {
    if (existsSync(target)) symlinkSync(target, join(lib, name));
  };
  place(build.dist, 'dist');
  place(build.docs, 'docs');
  place(join(build.dist, 'go'), 'go');
  place(join(build.dist, 'java'), 'java');
  place(build.stage, 'package');
  return lib;
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'build') {
    const unknown = rest.filter((l) => !(LANGUAGES as readonly string[]).includes(l));
    if (unknown.length > 0) throw new Error(`unknown language ${unknown.join(', ')}: give ${LANGUAGES.join(', ')}`);
    const build = await buildJsii(rest.length > 0 ? { languages: rest as Language[] } : {});
    const lib = link(build);
    say(`${lib} -> ${build.dir} (${build.built.length > 0 ? `built: ${build.built.join(', ')}` : 'cached'})`);
    for (const [step, seconds] of Object.entries(build.timings)) say(`  ${step}: ${seconds} s when built`);
    // The library's own packages (dist/go and dist/java also hold the peers' bindings, copied in from their cache).
    const own = ['python', 'dotnet', 'js', join('go', JSII_NAMES.go.packageName), join('java', ...JSII_NAMES.java.groupId.split('.'), JSII_NAMES.java.artifactId)];
    for (const name of own) {
      const path = join(build.dist, name);
      if (existsSync(path) && lstatSync(path).isDirectory()) say(`  dist/${name}: ${(sizeOf(path) / 1024).toFixed(0)} KiB`);
    }
    return 0;
  }
  if (command === 'diff' || command === 'baseline') {
    const build = await buildJsii({ languages: [], docs: false });
    if (command === 'baseline') {
      say(writeBaseline(build.stage));
      return 0;
    }
    const result = apiDiff(build.stage);
    say(result.output.trim());
    if (result.code !== 0) say('the API changed incompatibly (above); if that is intended, run `npm run jsii:baseline` and say it in the CHANGELOG');
    return result.code ?? 1;
  }
  throw new Error('usage: tsx tools/jsii/main.ts build [python|go|java|dotnet ...] | diff | baseline');
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      say(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    },
  );
}
