/**
 * How `status` prints its rows: a kubectl-style table with relative times, or JSON or YAML.
 */
import { stringify } from 'yaml';
import { Duration } from '../../api';
import type { OrderStatus } from './columns';

/**
 * A duration as kubectl prints ages (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`): `90s`, `5m30s`, `75m`,
 * `5h30m`, `36h`, `3d4h`, `29d`, `2y10d`, `9y`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(Math.abs(ms) / 1000);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const years = Math.floor(days / 365);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  if (days < 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** `2026-07-01T10:00:00Z (in 29d)`, or `(5m ago)` for a time passed; the text as it is when it is no time. */
export function timeCell(time: string, now: Date): string {
  const at = Date.parse(time);
  if (Number.isNaN(at)) return time;
  const delta = at - now.getTime();
  return `${time} (${delta >= 0 ? `in ${humanDuration(delta)}` : `${humanDuration(delta)} ago`})`;
}

/** The value of an absent field, as kubectl prints it. */
const NONE = '<none>';
/** A column that does not apply to the kind. */
const NOT_APPLICABLE = '-';

/** The table's cells of one row. */
function cells(row: OrderStatus, now: Date): string[] {
  const credential = row.kind === 'KeystoneApplicationCredential';
  const hasGeneration = row.orderedGeneration !== null;
  let generation = NOT_APPLICABLE;
  if (hasGeneration) {
    generation = row.generation === null ? NONE : String(row.generation);
    if (row.orderedGeneration !== null && (row.generation === null || row.orderedGeneration > row.generation)) generation += ` (ordered ${row.orderedGeneration})`;
  }
  let next = NOT_APPLICABLE;
  if (credential) {
    const off = row.rotationInterval !== null && isZeroDuration(row.rotationInterval);
    next = row.nextRotation !== null ? timeCell(row.nextRotation, now) : off ? 'off' : NONE;
  }
  let grace = NOT_APPLICABLE;
  if (credential) {
    grace = row.gracePeriod === null ? 'none' : row.gracePeriod.until !== null ? `until ${timeCell(row.gracePeriod.until, now)}` : `generation ${row.gracePeriod.previousGeneration}`;
  }
  return [row.kind, row.name, row.ready ?? NONE, row.reason ?? NONE, generation, next, grace];
}

/**
 * The policy columns (issue 48), shown only when some row has a window or a field from a fleet default, so a table of
 * orders without either reads as before: WINDOW (open until, the next opening, refused) and POLICY (interval/grace,
 * jitter, and the fleet defaults it came from).
 */
function policyCells(row: OrderStatus, now: Date): string[] {
  if (row.kind !== 'KeystoneApplicationCredential' || row.policy === null) return [NOT_APPLICABLE, NOT_APPLICABLE];
  const w = row.window;
  const window = w === null ? 'none' : w.refused ? 'refused' : w.opens === null ? 'never opens' : w.open && w.closes !== null ? `open until ${timeCell(w.closes, now)}` : timeCell(w.opens, now);
  const rotation = row.policy.rotation;
  const jitter = rotation.jitterPercent ? ` jitter ${rotation.jitterPercent}%` : '';
  const fleet = [...new Set(Object.values(row.policy.sources).filter((s) => s === 'ControlPlane' || s === 'NamespaceAssignment'))];
  return [window, `${rotation.interval ?? NONE}/${rotation.gracePeriod ?? NONE}${jitter}${fleet.length > 0 ? ` (defaults: ${fleet.join(', ')})` : ''}`];
}

/** Whether the table shows the policy columns: some order has a window or takes a field from a fleet default. */
function showsPolicy(rows: readonly OrderStatus[]): boolean {
  return rows.some((row) => row.window !== null || Object.values(row.policy?.sources ?? {}).some((s) => s === 'ControlPlane' || s === 'NamespaceAssignment'));
}

function isZeroDuration(text: string): boolean {
  try {
    return Duration.parse(text).isZero();
  } catch {
    return false;
  }
}

/** Columns padded to the widest cell plus three spaces, as kubectl aligns them; no trailing blanks. */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('').trimEnd() + '\n').join('');
}

/** The CLUSTER cell of a row of the management cluster (a Secret's name, a cluster's, never has parentheses). */
export const MANAGEMENT_CLUSTER = '(management)';

/**
 * The kubectl-style table; a NAMESPACE column first when `allNamespaces`, and before it a CLUSTER column when `clusters`
 * (target clusters are registered).
 */
export function formatTable(rows: readonly OrderStatus[], options: { allNamespaces: boolean; now: Date; clusters?: boolean }): string {
  const policy = showsPolicy(rows);
  const header = ['KIND', 'NAME', 'READY', 'REASON', 'GENERATION', 'NEXT ROTATION', 'GRACE PERIOD', ...(policy ? ['WINDOW', 'POLICY'] : [])];
  const lead = (row: OrderStatus): string[] => [...(options.clusters ? [row.cluster ?? MANAGEMENT_CLUSTER] : []), ...(options.allNamespaces ? [row.namespace] : [])];
  const head = [...(options.clusters ? ['CLUSTER'] : []), ...(options.allNamespaces ? ['NAMESPACE'] : [])];
  return alignColumns([[...head, ...header], ...rows.map((row) => [...lead(row), ...cells(row, options.now), ...(policy ? policyCells(row, options.now) : [])])]);
}

/** The output formats of `-o`. */
export const OUTPUT_FORMATS = ['json', 'yaml'] as const;
/** An output format of `-o`. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The machine output: `{ "items": [OrderStatus...] }` as JSON (indented, with a final newline) or YAML. */
export function formatMachine(rows: readonly OrderStatus[], format: OutputFormat): string {
  const document = { items: rows };
  return format === 'json' ? `${JSON.stringify(document, null, 2)}\n` : stringify(document);
}

