/**
 * Epoch ms → ISO 8601 (UTC), exactly as Date#toISOString writes it. By hand because a CSV export
 * writes three dates per row: toISOString costs about 0.35 µs (a second per 1,000,000 rows), this
 * about a seventh of it, the date part of each day computed once.
 */
const DAY_MS = 86_400_000;
/** Years 0000-9999 only: beyond, toISOString writes a signed six-digit year. */
const LAST_MS = 253_402_300_800_000;
const MAX_CACHED_DAYS = 100_000;
const dayPrefixes = new Map<number, string>();
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

export function isoDate(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    if (dayPrefixes.size >= MAX_CACHED_DAYS) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  rest -= seconds * 1000;
  return `${prefix}${TWO_DIGITS[hours]!}:${TWO_DIGITS[minutes]!}:${TWO_DIGITS[seconds]!}.${rest < 10 ? '00' : rest < 100 ? '0' : ''}${rest}Z`;
}
