import { CronExpressionParser } from 'cron-parser';
import { fromQuartz, isQuartz, type Converted } from './quartz.js';

/** An IANA time zone the runtime knows ("UTC", "Europe/Paris"); Intl refuses the others. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The expression the scheduler runs for a task's CRON expression: cron's 5 fields, or 6 with seconds, as
 * written; a Quartz expression (Horizon's: `?` in day-of-month or day-of-week, optional year) converted, since
 * its day-of-week numbers mean other days. The task keeps the text its client wrote; only the plan uses this.
 */
export function schedulerCron(expression: string): Converted {
  const fields = expression.trim().split(/\s+/);
  if (isQuartz(fields)) return fromQuartz(fields);
  if (fields.length < 5 || fields.length > 6) {
    return { ok: false, reason: `expected 5 or 6 fields, got ${fields.length} (or a Quartz expression of 6 or 7 fields with ? in day-of-month or day-of-week)` };
  }
  return { ok: true, cron: fields.join(' ') };
}

/**
 * Validates a CRON expression the way Agenda will run it (schedulerCron, then cron-parser), and answers its
 * next occurrence after `from` in the zone, or why it is not valid.
 */
export function nextCronOccurrence(expression: string, timezone: string, from = new Date()): { ok: true; next: number } | { ok: false; reason: string } {
  const converted = schedulerCron(expression);
  if (!converted.ok) return converted;
  try {
    const next = CronExpressionParser.parse(converted.cron, { tz: timezone, currentDate: from, strict: false }).next();
    return { ok: true, next: next.getTime() };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
