/**
 * The project's cdk8s app synthesized into a directory of the test's own, so tests that read the manifests (the Pulumi
 * Kubernetes example) never depend on a `dist/` left behind by an earlier `npm run synth`.
 */
import { App } from 'cdk8s';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProjectCharts } from '../../constructs/app';

/** Synthesizes the app (the same as `npm run synth`) into a new temp dir and returns it. */
export function synthesizeManifests(parent: string = process.env.KAC_TEST_WORKDIR ?? tmpdir()): string {
  const outdir = mkdtempSync(join(parent, 'synth-'));
  const app = new App({ outdir });
  defineProjectCharts(app);
  app.synth();
  return outdir;
}
