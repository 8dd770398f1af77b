/**
 * Horizon's FiniteDuration strings ("30 seconds", "30 s", "7 days"), as its trigger schema describes
 * them: a whole number, optional spaces, a unit. Answers milliseconds, or null when it does not parse.
 */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

export function durationMs(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = /^\s*(\d{1,9}) *([a-z]+)\s*$/i.exec(text);
  const unit = m ? UNIT_MS[m[2]!.toLowerCase()] : undefined;
  return m && unit !== undefined ? Number(m[1]) * unit : null;
}
