import type { CertificateFacts } from './facts.js';
import type { Grade } from './scale.js';

/** The vendor's LocalizedString: {lang, value}. */
export interface LocalizedString {
  lang: string;
  value: string;
}

/** A rule's verdict on one certificate: whether it holds and why, in words a certificate owner can act on. */
export interface Verdict {
  pass: boolean;
  message: string;
}

/**
 * One grading rule. `condition` is what the rule requires, as a certificate query (HCQL) where the language
 * can say it (`san exists`, key types, signature algorithms) and in prose where it cannot (date arithmetic,
 * extensions HCQL has no field for); `check` is the rule itself, a pure function of the certificate's facts,
 * which also says why.
 * `applies` narrows a rule to the certificates it is about (TLS leaf rules skip CA certificates).
 */
export interface GradingRule {
  name: string;
  condition: string;
  /** `HCQL`: the condition is a certificate query (parses, and a search with it finds the certificates that pass); `text`: prose. */
  conditionLanguage: 'HCQL' | 'text';
  /** The grade a certificate failing the rule gets. */
  grade: Grade;
  /** Points of the rule (the vendor's GradingRule.score). */
  score: number;
  description: string;
  applies?: (facts: CertificateFacts) => string | true;
  check: (facts: CertificateFacts) => Verdict;
}

export interface GradingRuleset {
  name: string;
  description: string;
  rules: readonly GradingRule[];
}

export const pass = (message: string): Verdict => ({ pass: true, message });
export const fail = (message: string): Verdict => ({ pass: false, message });

/** Applies to end-entity certificates only: the reason it does not apply to a CA. */
export const leafOnly = (facts: CertificateFacts): string | true => (facts.ca ? 'a CA certificate: the rule is about end-entity certificates' : true);

export const en = (value: string): LocalizedString[] => [{ lang: 'en', value }];
