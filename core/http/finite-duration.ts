/**
 * Horizon's FiniteDuration strings ("1 second", "30 seconds", "30 s", "500ms", "7 days"): a whole number,
 * optional spaces, a unit, as the vendor's request schemas describe them (horizon-mcp
 * src/tools/config/schemas: PKI queue throttleDuration, integrated CA crlLifetime, trigger runPeriod and
 * timeouts). One parser for every collection that takes them.
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

/** The duration in milliseconds, or null when `text` is not a FiniteDuration (or too large to be exact). */
export function parseFiniteDuration(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const match = /^\s*([0-9]{1,15}) *([a-z]+)\s*$/i.exec(text);
  const unit = match ? UNIT_MS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return null;
  const ms = Number(match[1]) * unit;
  return Number.isSafeInteger(ms) ? ms : null;
}
