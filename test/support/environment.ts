/**
 * The Jest test environment of the suite: Node's, plus the cluster pool (test/support/kube-pool.ts). A file whose
 * `@needs` line names `kube` is given one control plane of the run for its whole run, before its first line executes:
 * that member's variables replace `KAC_KUBECONFIG`, `KAC_KUBE_SERVER`, ... in the file's `process.env` (Jest gives every
 * file its own copy), so the files and the helpers they call reach the member unchanged; `lockCluster` then has nothing
 * left to wait for. A file that also names `target-kube` holds the run's target cluster too. Files that need no API
 * server run beside them as before.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { takeMember, type TakenMember } from './kube-pool';
import { needsOf } from './needs';


export default class SuiteEnvironment extends TestEnvironment {
  private readonly needs: Set<string>;
  private readonly file: string;
  private member: TakenMember | undefined;
  private heldSince = 0;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.file = basename(context.testPath);
    this.needs = new Set(needsOf(readFileSync(context.testPath, 'utf8')));
  }

  override async setup(): Promise<void> {
    await super.setup();
    const workDir = process.env.KAC_TEST_WORKDIR;
    if (workDir === undefined || !this.needs.has('kube')) return;
    this.member = await takeMember(workDir, this.file, { target: this.needs.has('target-kube') });
    if (this.member === undefined) return;
    const env = this.global.process.env;
    Object.assign(env, this.member.env, { KAC_KUBE_POOL_MEMBER: String(this.member.index) });
    this.heldSince = Date.now();
    process.stdout.write(`[cluster-pool] ${this.file} took cluster ${this.member.index} after ${(this.member.waitedMs / 1000).toFixed(1)} s\n`);
  }

  override async teardown(): Promise<void> {
    if (this.member !== undefined) {
      this.member.release();
      process.stdout.write(`[cluster-pool] ${this.file} held cluster ${this.member.index} ${((Date.now() - this.heldSince) / 1000).toFixed(1)} s\n`);
      this.member = undefined;
    }
    await super.teardown();
  }
}
