/**
 * Horizon's FiniteDuration strings ("1 second", "30 seconds", "500ms", "7 days"): a whole number and a unit,
 * the pattern of the vendor's request schemas (horizon-mcp src/tools/config/schemas/pki-connectors.schema.json
 * `FiniteDuration`; pki-queues.ts throttle_duration). Used by PKI queues (throttleDuration) and by the Horizon
 * form of the integrated CA (crlLifetime).
 */
const FINITE_DURATION = /^([0-9]+) *(ms|millisecond|milliseconds|s|second|seconds|m|minute|minutes|h|hour|hours|d|day|days)$/;

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
  const match = FINITE_DURATION.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  return Number.isSafeInteger(ms) ? ms : null;
}
