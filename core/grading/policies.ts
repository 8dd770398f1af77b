/**
 * The built-in grading policies (read-only: the spec lists GET routes only, and the vendor's clients treat
 * policies and rulesets as system-provided, never written through the API). A policy weighs rulesets
 * (the vendor's WeightedGradingRuleset: {ruleset, weight}); its grade is the worst grade of the rules that
 * failed, its score the weighted mean of its rulesets' scores.
 */
export interface WeightedRuleset {
  ruleset: string;
  weight: number;
}

export interface GradingPolicy {
  name: string;
  description: string;
  rulesets: readonly WeightedRuleset[];
}

/** The policy of the TLS hygiene rulesets. */
export const DEFAULT_POLICY = 'Certwright-Grading-Policy';
export const PQC_POLICY = 'Certwright-PQC-Readiness';

export const BUILTIN_POLICIES: readonly GradingPolicy[] = [
  {
    name: DEFAULT_POLICY,
    description: 'TLS certificate hygiene: key type and size, signature algorithm, CA/B validity schedule, SAN presence, extended key usage',
    rulesets: [
      { ruleset: 'key-type-and-size', weight: 3 },
      { ruleset: 'signature-algorithm', weight: 3 },
      { ruleset: 'cabf-validity', weight: 2 },
      { ruleset: 'san-presence', weight: 1 },
      { ruleset: 'extended-key-usage', weight: 1 },
    ],
  },
  {
    name: PQC_POLICY,
    description: 'Post-quantum readiness: which certificates a quantum computer would break (RSA, ECDSA, EdDSA keys and signatures)',
    rulesets: [{ ruleset: 'pqc-readiness', weight: 1 }],
  },
];

const BY_NAME = new Map(BUILTIN_POLICIES.map((p) => [p.name.toLowerCase(), p]));

/** A built-in policy by name (case-insensitive), or undefined. */
export const policyNamed = (name: string): GradingPolicy | undefined => BY_NAME.get(name.toLowerCase());
