import { CronExpressionParser } from 'cron-parser';

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
 * Validates a CRON expression (5 fields, or 6 with seconds) the way Agenda will run it (cron-parser), and
 * answers its next occurrence after `from` in the zone, or why it is not valid.
 */
export function nextCronOccurrence(expression: string, timezone: string, from = new Date()): { ok: true; next: number } | { ok: false; reason: string } {
  const fields = expression.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6) return { ok: false, reason: `expected 5 or 6 fields, got ${fields.length}` };
  try {
    const next = CronExpressionParser.parse(expression, { tz: timezone, currentDate: from, strict: false }).next();
    return { ok: true, next: next.getTime() };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
