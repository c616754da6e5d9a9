/**
 * `keystone-appcred alerts` and `keystone-appcred dashboard` as a user runs them: the rule file with the defaults or the
 * flags given, YAML or JSON; a bad flag names itself, the value and the rule; the dashboard's JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { program } from '../../../src/cli/main';
import { alertsCommand, dashboardCommand, parameterFlag } from '../../../src/cli/monitoring';
import { alertRules } from '../../../src/observability/alerts';

async function run(command: ReturnType<typeof alertsCommand>, args: string[]): Promise<void> {
  command.exitOverride();
  await command.parseAsync(args, { from: 'user' });
}

function capture(make: (io: { write: (t: string) => void }) => ReturnType<typeof alertsCommand>) {
  const out: string[] = [];
  return { command: make({ write: (t) => out.push(t) }), out };
}

describe('keystone-appcred alerts', () => {
  it('prints the rule file with the production defaults', async () => {
    const { command, out } = capture((io) => alertsCommand(io));
    await run(command, []);
    expect(parse(out.join(''))).toEqual(JSON.parse(JSON.stringify(alertRules())));
  });

  it('takes every parameter as a flag, and prints JSON with -o json', async () => {
    const { command, out } = capture((io) => alertsCommand(io));
    await run(command, ['--rotation-overdue-after', '30m', '--keystone-failure-ratio', '0.8', '--operator-selector', 'job="kac"', '--runbook-base-url', 'https://docs.example/op.html', '-o', 'json']);
    expect(JSON.parse(out.join(''))).toEqual(JSON.parse(JSON.stringify(alertRules({ rotationOverdueAfter: '30m', keystoneFailureRatio: 0.8, operatorSelector: 'job="kac"', runbookBaseUrl: 'https://docs.example/op.html' }))));
    expect(parameterFlag('notReadyOperatorFor')).toBe('--not-ready-operator-for');
    const help = alertsCommand().helpInformation();
    for (const flag of ['--expiry-warning <duration>', '--memory-ratio <ratio>', '--operator-selector <matchers>', '--runbook-base-url <url>']) expect(help).toContain(flag);
  });

  it.each([
    [['--expiry-warning', 'soon'], '--expiry-warning ("soon") must be a Prometheus duration such as 30s, 15m or 1h30m'],
    [['--memory-ratio', 'most'], '--memory-ratio ("most") must be a number above 0 and at most 1'],
    [['--memory-ratio', '2'], '--memory-ratio (2) must be a number above 0 and at most 1'],
  ])('refuses %j naming the flag', async (args, message) => {
    const { command, out } = capture((io) => alertsCommand(io));
    await expect(run(command, args)).rejects.toThrow(message);
    expect(out).toEqual([]);
  });

  it('is a command of the program, beside dashboard', () => {
    expect(program().commands.map((c) => c.name())).toEqual(expect.arrayContaining(['alerts', 'dashboard']));
  });
});

describe('keystone-appcred dashboard', () => {
  it('prints the shipped dashboard', async () => {
    const { command, out } = capture((io) => dashboardCommand(io));
    await run(command, []);
    expect(out.join('')).toBe(readFileSync(join(__dirname, '../../../src/observability/dashboard.json'), 'utf8'));
  });
});
