/**
 * Quartz cron expressions (what Horizon and its clients send: `0 0 8 * * ?`) turned into what the scheduler
 * runs (cron-parser's six fields, seconds first). Quartz differs from cron in ways that change *when* a task
 * runs, so it is converted, not passed through:
 * - day-of-week counts 1 = SUN … 7 = SAT (cron: 0 = SUN … 6 = SAT): a Quartz `2` is Monday, a cron `2` Tuesday;
 * - `?` ("no specific value") stands in day-of-month or day-of-week, and Quartz requires it in one of them:
 *   that `?` is how an expression is recognised as Quartz (cron-parser's own six fields never need it);
 * - an optional seventh field, the year, which cron-parser does not know.
 */

export type Converted = { ok: true; cron: string } | { ok: false; reason: string };

const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** A Quartz expression: six or seven fields with `?` as the whole day-of-month or day-of-week field. */
export function isQuartz(fields: readonly string[]): boolean {
  return (fields.length === 6 || fields.length === 7) && (fields[3] === '?' || fields[5] === '?');
}

/** Quartz day of week (1-7 or SUN-SAT) → cron's number (0-6); null when it is neither. */
function cronDay(token: string): number | null {
  const name = DAY_NAMES.indexOf(token.toUpperCase());
  if (name >= 0) return name;
  if (!/^\d+$/.test(token)) return null;
  const day = Number(token);
  return day >= 1 && day <= 7 ? day - 1 : null;
}

/**
 * One comma item of a Quartz day-of-week field in cron's numbering. Ranges and steps are expanded to a list
 * (cron-parser reads a day-of-week step next to `?` wrongly: `1/2` gave days 0,1,3,5).
 */
function dayItem(item: string): string | null {
  const upper = item.toUpperCase();
  if (upper === '*') return '*';
  if (upper === 'L') return '6'; // `L` alone: the last day of the week, Saturday.
  const last = /^(.+)L$/.exec(upper); // `6L`: the last Friday of the month.
  if (last) {
    const day = cronDay(last[1]!);
    return day === null ? null : `${day}L`;
  }
  const nth = /^(.+)#([1-5])$/.exec(upper); // `2#1`: the first Monday of the month.
  if (nth) {
    const day = cronDay(nth[1]!);
    return day === null ? null : `${day}#${nth[2]}`;
  }
  const stepped = /^([^/]+)(?:\/(\d+))?$/.exec(upper);
  if (!stepped) return null;
  const [, span, stepText] = stepped;
  const step = stepText === undefined ? 1 : Number(stepText);
  if (step < 1) return null;
  let from: number | null;
  let to: number | null;
  if (span === '*') {
    [from, to] = [0, 6];
  } else if (span!.includes('-')) {
    const [a, b] = span!.split('-');
    [from, to] = [cronDay(a ?? ''), cronDay(b ?? '')];
  } else {
    from = cronDay(span!);
    // `3/2`: from Tuesday every second day to the end of the week; `3` alone: that day.
    to = stepText === undefined ? from : 6;
  }
  if (from === null || to === null || from > to) return null;
  if (stepText === undefined && from === to) return String(from);
  const days: number[] = [];
  for (let day = from; day <= to; day += step) days.push(day);
  return days.join(',');
}

/** A Quartz expression (isQuartz) as cron-parser's six fields, or why it cannot run. */
export function fromQuartz(fields: readonly string[]): Converted {
  const [second, minute, hour, dayOfMonth, month, dayOfWeek, year] = fields as [string, string, string, string, string, string, string | undefined];
  if (dayOfMonth === '?' && dayOfWeek === '?') return { ok: false, reason: '? may stand in day-of-month or day-of-week, not both' };
  // The scheduler has no year: an expression for every year is the only one it can run as written.
  if (year !== undefined && year !== '*') return { ok: false, reason: `the year field "${year}" is not supported (only *)` };
  if (/W|L-/i.test(dayOfMonth)) return { ok: false, reason: `day-of-month "${dayOfMonth}": Quartz's W (nearest weekday) and L-n are not supported` };
  let days = '*';
  if (dayOfWeek !== '?') {
    const items = dayOfWeek.split(',').map(dayItem);
    if (items.some((i) => i === null)) return { ok: false, reason: `day-of-week "${dayOfWeek}" is not Quartz's (1-7 for SUN-SAT, names, L, #)` };
    days = items.join(',');
  }
  return { ok: true, cron: [second, minute, hour, dayOfMonth === '?' ? '*' : dayOfMonth, month, days].join(' ') };
}
