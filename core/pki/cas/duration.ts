/** Horizon's duration strings ("10 seconds", "12h", "500 ms"), as its CA `refresh` and `timeout` fields take them. */
const DURATION = /^([0-9]+) *(ms|millisecond|milliseconds|s|second|seconds|m|minute|minutes|h|hour|hours|d|day|days)$/;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export const DURATION_PATTERN = DURATION.source;

/** Milliseconds of a duration string; null when the text is not one. */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (!m) return null;
  const word = m[2]!;
  const unit = word === 'ms' || word.startsWith('milli') ? 'ms' : word[0]!;
  return Number(m[1]) * UNIT_MS[unit]!;
}
