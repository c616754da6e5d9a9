/**
 * `keystone-appcred alerts` and `keystone-appcred dashboard`: the operator's alerts as a Prometheus rule file and its
 * Grafana dashboard as JSON, on stdout, for a Prometheus without prometheus-operator (`rule_files`) and a Grafana
 * without the dashboard sidecar (import). With prometheus-operator and the sidecar, `manifests --monitoring` (or the
 * `OperatorMonitor`, `AlertRules` and `Dashboard` constructs) installs the same rules and dashboard as objects.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { stringify } from 'yaml';
import { alertRules } from '../observability/alerts';
import { ALERT_DEFAULTS, ALERT_PARAMETER_HELP, type AlertParameters } from '../observability/alert-parameters';
import { dashboardJson } from '../observability/dashboard';

/** Where the commands write. */
export interface MonitoringIo {
  /** Receives the output. @default process.stdout.write */
  readonly write?: (text: string) => void;
}

/** A parameter's flag: its key in kebab case (`rotationOverdueAfter` → `--rotation-overdue-after`). */
export const parameterFlag = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The rule file as `alerts` prints it: YAML (the default) or JSON. */
export function renderAlerts(parameters: AlertParameters = {}, format: 'yaml' | 'json' = 'yaml'): string {
  const rules = alertRules(parameters);
  return format === 'json' ? `${JSON.stringify(rules, null, 2)}\n` : stringify(rules, { lineWidth: 0 });
}

/** The `alerts` subcommand. A bad parameter fails with its flag, the value and the rule. */
export function alertsCommand(io: MonitoringIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  const command = new Command('alerts').description(
    "print the operator's alerts as a Prometheus rule file (for rule_files, promtool check rules); manifests --monitoring installs them as a PrometheusRule",
  );
  for (const [key, help] of Object.entries(ALERT_PARAMETER_HELP) as [keyof AlertParameters, string][]) {
    const numeric = typeof ALERT_DEFAULTS[key] === 'number';
    command.addOption(new Option(`${parameterFlag(key)} <${numeric ? 'ratio' : key === 'operatorSelector' ? 'matchers' : key === 'runbookBaseUrl' ? 'url' : 'duration'}>`, help).default(ALERT_DEFAULTS[key]));
  }
  command.addOption(new Option('-o, --output <format>', 'yaml or json').choices(['yaml', 'json']).default('yaml'));
  command.action((opts: Record<string, string | number>) => {
    const parameters: Record<string, string | number> = {};
    for (const key of Object.keys(ALERT_PARAMETER_HELP) as (keyof AlertParameters)[]) {
      const value = opts[key];
      if (value === undefined) continue;
      if (typeof ALERT_DEFAULTS[key] === 'number') {
        const n = Number(value);
        if (String(value).trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${parameterFlag(key)} (${JSON.stringify(value)}) must be a number above 0 and at most 1`);
        parameters[key] = n;
      } else parameters[key] = String(value);
    }
    let text: string;
    try {
      text = renderAlerts(parameters as AlertParameters, opts.output as 'yaml' | 'json');
    } catch (error) {
      // `alert parameter rotationOverdueAfter ("x") must be …` → `--rotation-overdue-after ("x") must be …`
      throw new Error(String(error instanceof Error ? error.message : error).replace(/^alert parameter (\w+)/, (_, key: string) => parameterFlag(key)));
    }
    write(text);
  });
  return command;
}

/** The `dashboard` subcommand. */
export function dashboardCommand(io: MonitoringIo = {}): Command {
  const write = io.write ?? ((text: string): void => void process.stdout.write(text));
  return new Command('dashboard')
    .description("print the operator's Grafana dashboard as JSON (Dashboards > New > Import); manifests --monitoring installs it as a ConfigMap for the grafana sidecar")
    .action(() => write(dashboardJson()));
}
