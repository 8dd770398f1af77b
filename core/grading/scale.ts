/**
 * The grade scale: A (best) to F (worst). A rule that fails gives its own grade; a ruleset's and a policy's
 * grade is the worst grade of the rules that failed (A when none did). Scores are separate: the share of
 * the points of the rules that applied (0–100), weighted over a policy's rulesets as the vendor's
 * WeightedGradingRuleset says.
 */
export const GRADES = ['A', 'B', 'C', 'D', 'E', 'F'] as const;
export type Grade = (typeof GRADES)[number];

export const isGrade = (value: unknown): value is Grade => typeof value === 'string' && (GRADES as readonly string[]).includes(value);

/** The worse of two grades. */
export const worse = (a: Grade, b: Grade): Grade => (GRADES.indexOf(a) >= GRADES.indexOf(b) ? a : b);

/** The worst of `grades`; A for none. */
export const worst = (grades: Iterable<Grade>): Grade => {
  let out: Grade = 'A';
  for (const g of grades) out = worse(out, g);
  return out;
};

/** Whether `next` is worse than `previous`. */
export const degraded = (previous: Grade, next: Grade): boolean => GRADES.indexOf(next) > GRADES.indexOf(previous);
