/**
 * Bounds on one computation rule or template string: a hostile or careless rule fails with a clear error
 * and its position, never a hang, a stack overflow or a huge answer.
 */
export const TEMPLATE_LIMITS = {
  /** Characters of a rule or template string (checked before parsing). */
  maxLength: 4096,
  /** Nested function calls and lists (counted by the grammar while parsing). */
  maxDepth: 32,
  /** Nodes evaluated plus list items processed, for one evaluation. */
  maxSteps: 10_000,
  /** Characters of any value computed on the way (a string, or a list's items together). */
  maxOutput: 65_536,
  /** Items of any list computed on the way. */
  maxItems: 1_000,
  /** Wall-clock budget of one evaluation, checked between steps. */
  maxMillis: 250,
  /** Characters of a regular expression. */
  maxRegexLength: 256,
  /** Unbounded repetitions (`*`, `+`, `{n,}`, `{n,m}` with m > 32) in one regular expression. */
  maxRegexUnbounded: 2,
  /** Characters of a value a regular expression runs on: with two unbounded repetitions, and with fewer. */
  maxRegexSubjectTwo: 256,
  maxRegexSubject: 1_024,
} as const;
