/**
 * What `pulumi package gen-sdk` needs on this machine: the CLI, and a language host per SDK language that can
 * generate. Pulumi's Python, Go and .NET hosts are not served by any registry, so ours stand in
 * (build-test-binaries.sh `pulumi-language-sdkgen` for Python and Go, `pulumi-language-dotnet` for .NET); they are
 * hard-linked under the names the CLI looks for into a directory put first on PATH for the gen-sdk runs only, so no
 * other Pulumi command ever sees a host that cannot run programs.
 */
import { chmodSync, copyFileSync, linkSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { resolveBinaries } from './binaries';
import { progress } from './proc';

/** Hard link, or copy where a link is impossible (another file system), executable. */
export function place(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
    chmodSync(to, 0o755);
  }
}

/** The CLI and the environment (PATH) under which `pulumi package gen-sdk` generates every SDK language. */
export function sdkgenEnvironment(base: NodeJS.ProcessEnv = process.env): { pulumi: string; env: NodeJS.ProcessEnv } {
  const bins = resolveBinaries(['pulumi', 'pulumi-language-sdkgen', 'pulumi-language-dotnet']);
  for (const [name, bin] of Object.entries(bins)) progress(`sdkgen: ${name} from ${bin.source}: ${bin.path}`);
  const parent = base.KAC_TEST_WORKDIR ?? tmpdir();
  mkdirSync(parent, { recursive: true });
  const hosts = mkdtempSync(join(parent, 'sdkgen-hosts-'));
  place(bins['pulumi-language-sdkgen'].path, join(hosts, 'pulumi-language-python'));
  place(bins['pulumi-language-sdkgen'].path, join(hosts, 'pulumi-language-go'));
  place(bins['pulumi-language-dotnet'].path, join(hosts, 'pulumi-language-dotnet'));
  return {
    pulumi: bins.pulumi.path,
    env: {
      ...base,
      PATH: `${hosts}:${dirname(bins.pulumi.path)}:${base.PATH ?? ''}`,
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
      PULUMI_HOME: base.PULUMI_HOME ?? join(hosts, 'home'),
    },
  };
}
