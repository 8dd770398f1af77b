/** Response schemas of the grading routes: the vendor's models (horizon-go v2) plus Certwright's members. */
const localized = { type: 'array', items: { type: 'object', properties: { lang: { type: 'string' }, value: { type: 'string' } } } } as const;
const grade = { type: 'string', enum: ['A', 'B', 'C', 'D', 'E', 'F'] } as const;
const weighted = { type: 'array', items: { type: 'object', properties: { ruleset: { type: 'string' }, weight: { type: 'integer' } } } } as const;

const rule = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    condition: { type: 'string' },
    conditionLanguage: { type: 'string', enum: ['HCQL', 'text'] },
    description: localized,
    scope: { type: ['string', 'null'] },
    score: { type: 'integer', description: 'Points of the rule' },
    grade: { ...grade, description: 'The grade a certificate failing the rule gets' },
  },
} as const;

export const policySchema = {
  type: 'object',
  properties: { _id: { type: 'string' }, name: { type: 'string' }, description: localized, rulesets: weighted },
} as const;

export const rulesetSchema = {
  type: 'object',
  properties: { _id: { type: 'string' }, name: { type: 'string' }, description: localized, scope: { type: ['string', 'null'] }, rules: { type: 'array', items: rule } },
} as const;

const explainedRule = {
  type: 'object',
  properties: {
    ...rule.properties,
    apply: { type: 'boolean', description: 'The rule applies to this certificate' },
    eval: { type: ['boolean', 'null'], description: 'The rule holds (null when it does not apply)' },
    obtained: { type: 'integer', description: 'Points earned' },
    result: { type: 'string', enum: ['pass', 'fail', 'not-applicable'] },
    message: { type: 'string', description: 'Why' },
  },
} as const;

export const explainedRulesetSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: localized,
    scope: { type: ['string', 'null'] },
    apply: { type: 'boolean' },
    certificate: { type: ['string', 'null'] },
    explained: { type: 'array', items: explainedRule },
    max: { type: 'integer' },
    obtained: { type: 'integer' },
    score: { type: 'number', description: 'obtained / max × 100' },
    grade,
  },
} as const;

export const explainedPolicySchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: localized,
    rulesets: weighted,
    certificate: { type: 'string' },
    explained: { type: 'array', items: explainedRulesetSchema },
    score: { type: 'number', description: 'Weighted mean of the rulesets\' scores' },
    grade: { ...grade, description: 'The worst grade of the rules that failed (A: none failed)' },
  },
} as const;
