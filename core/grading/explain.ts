import { createHash } from 'node:crypto';
import type { CertificateFacts } from './facts.js';
import type { GradingPolicy } from './policies.js';
import { rulesetNamed } from './rulesets.js';
import { en, type GradingRule, type GradingRuleset, type LocalizedString } from './rules.js';
import { worst, type Grade } from './scale.js';

/**
 * Explain: every rule of a ruleset or a policy on one certificate, with pass/fail and why. The shapes are the
 * vendor's ExplainedGradingRule / ExplainedGradingRuleset / ExplainedGradingPolicyResponse (horizon-go v2
 * models) — `apply`, `eval` (the rule holds), `score` (its points), `obtained` (the points it earned), `max`,
 * `grade`, `score` — plus Certwright's `name`, `result` (pass | fail | not-applicable), `message` (why) and,
 * on a rule, `grade` (what failing it gives) and `conditionLanguage`.
 */
export interface ExplainedRule {
  name: string;
  condition: string;
  conditionLanguage: 'HCQL' | 'text';
  description: LocalizedString[];
  scope: null;
  score: number;
  grade: Grade;
  apply: boolean;
  eval: boolean | null;
  obtained: number;
  result: 'pass' | 'fail' | 'not-applicable';
  message: string;
}

export interface ExplainedRuleset {
  name: string;
  description: LocalizedString[];
  scope: null;
  apply: boolean;
  certificate?: string | null;
  explained: ExplainedRule[];
  max: number;
  obtained: number;
  /** obtained / max × 100, two decimals; 100 when no rule applied. */
  score: number;
  grade: Grade;
}

export interface ExplainedPolicy {
  name: string;
  description: LocalizedString[];
  rulesets: { ruleset: string; weight: number }[];
  certificate: string;
  explained: ExplainedRuleset[];
  score: number;
  grade: Grade;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** A stable object id for a built-in (24 hex characters, as the inventory's ids). */
export const builtinId = (kind: string, name: string): string => createHash('sha256').update(`${kind}:${name}`).digest('hex').slice(0, 24);

function explainRule(rule: GradingRule, facts: CertificateFacts): ExplainedRule {
  const base = { name: rule.name, condition: rule.condition, conditionLanguage: rule.conditionLanguage, description: en(rule.description), scope: null, score: rule.score, grade: rule.grade };
  const applies = rule.applies ? rule.applies(facts) : true;
  if (applies !== true) return { ...base, apply: false, eval: null, obtained: 0, result: 'not-applicable', message: `not applicable: ${applies}` };
  const verdict = rule.check(facts);
  return { ...base, apply: true, eval: verdict.pass, obtained: verdict.pass ? rule.score : 0, result: verdict.pass ? 'pass' : 'fail', message: verdict.message };
}

export function explainRuleset(ruleset: GradingRuleset, facts: CertificateFacts): ExplainedRuleset {
  const explained = ruleset.rules.map((r) => explainRule(r, facts));
  const applied = explained.filter((r) => r.apply);
  const max = applied.reduce((sum, r) => sum + r.score, 0);
  const obtained = applied.reduce((sum, r) => sum + r.obtained, 0);
  return {
    name: ruleset.name,
    description: en(ruleset.description),
    scope: null,
    apply: applied.length > 0,
    explained,
    max,
    obtained,
    score: max === 0 ? 100 : round2((obtained / max) * 100),
    grade: worst(explained.filter((r) => r.result === 'fail').map((r) => r.grade)),
  };
}

export function explainPolicy(policy: GradingPolicy, facts: CertificateFacts, certificate: string): ExplainedPolicy {
  const explained = policy.rulesets.map(({ ruleset }) => ({ ...explainRuleset(rulesetNamed(ruleset)!, facts), certificate: null }));
  let weights = 0;
  let total = 0;
  policy.rulesets.forEach(({ weight }, i) => {
    if (!explained[i]!.apply) return;
    weights += weight;
    total += weight * explained[i]!.score;
  });
  return {
    name: policy.name,
    description: en(policy.description),
    rulesets: policy.rulesets.map((r) => ({ ...r })),
    certificate,
    explained,
    score: weights === 0 ? 100 : round2(total / weights),
    grade: worst(explained.map((r) => r.grade)),
  };
}

/** The rules a certificate failed, as a grade record keeps them. */
export const failedRules = (policy: ExplainedPolicy): { ruleset: string; rule: string; grade: Grade; message: string }[] =>
  policy.explained.flatMap((rs) => rs.explained.filter((r) => r.result === 'fail').map((r) => ({ ruleset: rs.name, rule: r.name, grade: r.grade, message: r.message })));
