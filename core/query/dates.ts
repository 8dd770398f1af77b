/**
 * Dates of the query languages (client-compat §4): `"2025"` … full ISO 8601 with an optional offset (no
 * zone = UTC), epoch milliseconds, `now`, `today` and relative durations. A partial date means its
 * start (`"2025-03"` = 2025-03-01T00:00:00.000Z). Columns hold epoch milliseconds.
 */
const ISO =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/i;

const DAY = 86_400_000;

/** Epoch ms of an ISO date text, or undefined when it is not one (or names a day that does not exist). */
export function parseIsoDate(text: string): number | undefined {
  const m = ISO.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', fraction = '', zone = ''] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > daysIn(year, month)) return undefined;
  let offset = 0;
  if (zone !== '' && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(fraction.padEnd(3, '0').slice(0, 3)));
  return date.getTime() - offset;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
}

const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Start of the UTC day of `now`: what `today` means. */
export const startOfUtcDay = (now: number): number => Math.floor(now / DAY) * DAY;
