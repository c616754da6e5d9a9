/**
 * The Events the operator records besides a condition's transition, from their table (src/api/events.ts): one row per
 * reason with its type, action, the kinds it is recorded on and what it means. The table is the one every emit site
 * builds its Event from, so the reference (docs/reference/logs-and-events.md) cannot name an Event the operator does
 * not record, nor miss one it does.
 */
import { EVENT_REASONS, type EventReason } from '../../src/api/events';
import { code, codes, table } from './markdown';

/** The Events section's table: reason, type, action, kinds, meaning; Warnings first, each group in the table's order. */
export function eventsTable(): string {
  const reasons = Object.keys(EVENT_REASONS) as EventReason[];
  const ordered = [...reasons.filter((r) => EVENT_REASONS[r].type === 'Warning'), ...reasons.filter((r) => EVENT_REASONS[r].type === 'Normal')];
  return table(
    ['reason', 'type', 'action', 'on', 'what it means'],
    ordered.map((reason) => {
      const entry = EVENT_REASONS[reason];
      return [code(reason), entry.type, code(entry.action), codes(entry.kinds), entry.meaning];
    }),
  );
}
