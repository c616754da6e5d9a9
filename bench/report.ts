/**
 * What every benchmark prints: one table of figures, each with its baseline measured in the same run, the ratio, the
 * goal and whether it is met, plus the conditions (date, cores, Node, bcrypt cost) a reader needs to compare runs.
 * Timings on a shared machine are noisy, so the benches interleave the measured and the baseline runs (A, B, A, B, …)
 * and report medians; a ratio is the only figure compared with a goal.
 */
import { cpus } from 'node:os';

/** One row of a benchmark's table. */
export interface Figure {
  /** What was measured, e.g. "create pass (cold session)". */
  readonly figure: string;
  /** The measured value, with its unit. */
  readonly value: string;
  /** The baseline's value, with its unit; "-" when the figure has none. */
  readonly baseline?: string;
  /** value / baseline, when both are times of the same thing. */
  readonly ratio?: number;
  /** The goal, as text ("≤ 1.15×", "0", "≤ 200 MB"). */
  readonly goal?: string;
  /** Whether the goal is met; undefined when the figure has no goal (reported for information). */
  readonly met?: boolean;
}

/** The median of a non-empty sample. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Milliseconds with one decimal. */
export const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** The conditions line every table starts with. */
export function conditions(extra: string): string {
  return `${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, Node ${process.version}, ${extra}`;
}

/** Renders the table as Markdown (readable on a terminal too, and pasted into docs/benchmarks.md as it is). */
export function table(title: string, context: string, figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    f.figure,
    f.value,
    f.baseline ?? '-',
    f.ratio === undefined ? '-' : `${f.ratio.toFixed(2)}×`,
    f.goal ?? '-',
    f.met === undefined ? '-' : f.met ? 'met' : 'MISSED',
  ]);
  const head = ['figure', 'value', 'baseline', 'ratio', 'goal', 'verdict'];
  const lines = [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`);
  return `\n## ${title}\n\n${context}\n\n${lines.join('\n')}\n`;
}

/** Prints a table to stdout. */
export function printTable(title: string, context: string, figures: readonly Figure[]): void {
  process.stdout.write(table(title, context, figures));
}
