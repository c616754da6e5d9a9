#!/usr/bin/env node
/**
 * The `keystone-appcred` command line.
 */
import { Command, InvalidArgumentError } from 'commander';
import { Duration } from '../api';
import { runDemo } from './demo';
import { manifestsCommand } from './manifests';
import { alertsCommand, dashboardCommand } from './monitoring';
import { operatorCommand } from './operator';
import { rotateCommand } from './rotate';
import { statusCommand } from './status';
import { packageVersion } from './version';

function duration(field: string) {
  return (value: string): string => {
    try {
      return Duration.parse(value, field).toString();
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
  };
}

export function program(): Command {
  const cli = new Command('keystone-appcred')
    .description('Mint, rotate, deliver, back up and tear down Keystone application credentials')
    .version(packageVersion(), '-V, --version', 'print the version of keystone-appcred');
  cli
    .command('demo')
    .description('run the lifecycle against a throwaway local Keystone (or OS_AUTH_URL) and print a timeline')
    .option('--seconds <n>', 'how long to run', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`--seconds (${v}) must be a positive integer`);
      return n;
    }, 180)
    .option('--interval <duration>', 'rotation.interval, Go format', duration('--interval'), '1m')
    .option('--grace <duration>', 'rotation.gracePeriod, Go format', duration('--grace'), '20s')
    .action(async (opts: { seconds: number; interval: string; grace: string }) => {
      await runDemo({ seconds: opts.seconds, interval: opts.interval, gracePeriod: opts.grace });
    });
  cli.addCommand(manifestsCommand());
  cli.addCommand(operatorCommand());
  cli.addCommand(statusCommand());
  cli.addCommand(rotateCommand());
  cli.addCommand(alertsCommand());
  cli.addCommand(dashboardCommand());
  return cli;
}

if (require.main === module) {
  program()
    .parseAsync(process.argv)
    .catch((error: unknown) => {
      process.stderr.write(`keystone-appcred: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
