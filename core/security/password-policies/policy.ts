import { randomInt } from 'node:crypto';

/** A password policy (client-compat §2.3 `passwordPolicy`). Counts are minimums; spChar lists the specials. */
export interface PasswordPolicy {
  name: string;
  minChar: number;
  maxChar: number;
  minLoChar: number;
  minUpChar: number;
  minDiChar: number;
  minSpChar: number;
  spChar: string;
}

/** The policy every tenant starts with; local account secrets must satisfy it. */
export const DEFAULT_POLICY: PasswordPolicy = {
  name: 'Default',
  minChar: 12,
  maxChar: 128,
  minLoChar: 1,
  minUpChar: 1,
  minDiChar: 1,
  minSpChar: 1,
  spChar: '!#$%&()*+,-./:;<=>?@[]^_{|}~',
};

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

/** What a password lacks to satisfy the policy, one phrase per rule broken (empty: it satisfies it). */
export function passwordProblems(policy: PasswordPolicy, password: string): string[] {
  const chars = [...password];
  const count = (set: string) => chars.filter((c) => set.includes(c)).length;
  const problems: string[] = [];
  if (chars.length < policy.minChar) problems.push(`at least ${policy.minChar} characters`);
  if (chars.length > policy.maxChar) problems.push(`at most ${policy.maxChar} characters`);
  if (count(LOWER) < policy.minLoChar) problems.push(`at least ${policy.minLoChar} lower-case letter(s)`);
  if (count(UPPER) < policy.minUpChar) problems.push(`at least ${policy.minUpChar} upper-case letter(s)`);
  if (count(DIGITS) < policy.minDiChar) problems.push(`at least ${policy.minDiChar} digit(s)`);
  if (policy.minSpChar > 0 && count(policy.spChar) < policy.minSpChar) problems.push(`at least ${policy.minSpChar} of ${policy.spChar}`);
  return problems;
}

/** Why a policy cannot be satisfied or is malformed, or null. */
export function policyProblem(policy: PasswordPolicy): string | null {
  const counts = [policy.minChar, policy.maxChar, policy.minLoChar, policy.minUpChar, policy.minDiChar, policy.minSpChar];
  if (counts.some((n) => !Number.isInteger(n) || n < 0)) return 'counts must be non-negative integers';
  if (policy.maxChar < 1 || policy.maxChar > 1024) return 'maxChar must be between 1 and 1024';
  if (policy.minChar > policy.maxChar) return 'minChar is greater than maxChar';
  const required = policy.minLoChar + policy.minUpChar + policy.minDiChar + policy.minSpChar;
  if (required > policy.maxChar) return `the minimum counts add up to ${required}, more than maxChar (${policy.maxChar})`;
  if (policy.minSpChar > 0 && policy.spChar.length === 0) return 'minSpChar needs at least one character in spChar';
  if (/[\s]/.test(policy.spChar)) return 'spChar must not contain white space';
  return null;
}

/**
 * A random password satisfying the policy (crypto.randomInt, uniform per position): the required
 * characters of each class, filled up to max(minChar, 16) capped at maxChar from all allowed classes,
 * then shuffled (Fisher–Yates).
 */
export function generatePassword(policy: PasswordPolicy): string {
  const pick = (set: string) => set[randomInt(set.length)]!;
  const out: string[] = [];
  const classes: [string, number][] = [
    [LOWER, policy.minLoChar],
    [UPPER, policy.minUpChar],
    [DIGITS, policy.minDiChar],
    [policy.spChar, policy.minSpChar],
  ];
  for (const [set, n] of classes) for (let i = 0; i < n && set.length > 0; i++) out.push(pick(set));
  const all = LOWER + UPPER + DIGITS + policy.spChar;
  const length = Math.min(policy.maxChar, Math.max(policy.minChar, 16, out.length));
  while (out.length < length) out.push(pick(all));
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.join('');
}
