/**
 * The command line's reference, from the commander definitions the command line itself runs (`program()` in
 * src/cli/main.ts) and, for `keystone-appcred operator`, from `SETTINGS` (src/operator/runtime/config.ts), which also
 * names each setting's environment variable: every flag, its argument, its default and its help text.
 */
import type { Command } from 'commander';
import { program } from '../../src/cli/main';
import { SETTINGS } from '../../src/operator/runtime/config';
import { code, table } from './markdown';

/** A setting's default as the page shows it: a value in a code span, a description (`<the cgroup's>`) as words. */
function shownDefault(value: string | undefined): string {
  if (value === undefined) return '';
  const described = /^<([^<>]*)>$/.exec(value);
  return described ? described[1] : code(value);
}

/** `keystone-appcred operator`: every setting, with its flag, its environment variable, its default and its meaning. */
export function operatorSettings(): string {
  return table(
    ['flag', 'environment', 'default', 'meaning'],
    SETTINGS.map((s) => [s.flag ? flags(s.flag) : '(environment only)', s.env ? code(s.env) : '', shownDefault(s.default), s.description]),
  );
}

/** An option's flags (`-o, --output <format>`) in a code span, its argument after it without brackets (`-o, --output` format). */
function flags(text: string): string {
  const [names, argument] = text.split(/ (?=[<[])/) as [string, string | undefined];
  return `${code(names)}${argument ? ` ${argument.replace(/[<>[\]]/g, '')}` : ''}`;
}

/** The subcommand `name` of the command line. */
function subcommand(name: string): Command {
  const found = program().commands.find((c) => c.name() === name);
  if (!found) throw new Error(`keystone-appcred has no subcommand ${name}`);
  return found;
}

/** The names of the subcommands whose options are a block of their own (`operator`'s are {@link operatorSettings}). */
export function subcommands(): string[] {
  return program()
    .commands.map((c) => c.name())
    .filter((name) => name !== 'operator');
}

/** A subcommand: its usage line, what it does, and a row per option with its default and help text. */
export function subcommandOptions(name: string): string {
  const command = subcommand(name);
  const rows = command.options
    .filter((o) => !o.hidden)
    .map((o) => {
      const fallback = o.defaultValue === undefined || o.defaultValue === false ? '' : code(String(o.defaultValue));
      const choices = o.argChoices ? ` (${o.argChoices.map(code).join(', ')})` : '';
      return [flags(o.flags), fallback, `${o.description}${choices}`];
    });
  return [
    `${code(`keystone-appcred ${name} ${command.usage()}`)}: ${command.description()}.`,
    '',
    rows.length > 0 ? table(['option', 'default', 'meaning'], rows) : 'No options but `--help`.',
  ].join('\n');
}
