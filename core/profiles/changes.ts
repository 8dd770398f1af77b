/**
 * Changes to a certificate's labels, owner, team and contact made by the update, migrate and import
 * workflows, checked against the profile's rules for those elements (the rules enrollment resolves with,
 * template.ts). Labels often scope who may see and act on a certificate (permission filters are
 * certificate queries), so a value the profile fixes is not changed through a request either.
 *
 * - A label the change sets, modifies or removes must be listed by the profile (PRF-013) and editable
 *   (PRF-011); owner, team and contactEmail likewise must be editable to change (PRF-011); a contactEmail
 *   must be an address (PRF-011).
 * - A certificate that enters the profile (migrate, import) takes the values the profile fixes (an element
 *   not editable, with a value), as an enrollment would.
 * - Mandatory elements: a change may not clear one (PRF-010). A certificate that enters the profile must end
 *   with every mandatory element set; an update only answers for what it changes (a certificate recorded
 *   before a rule existed can still have its other elements updated).
 *
 * Answers the changes to make: the requested ones, plus the fixed values of a profile entered.
 */
import { ProblemError } from '../errors/index.js';
import type { KeyValue } from '../inventory/types.js';
import { checkContactEmail, labelNotAuthorized, nonEmpty } from './template.js';
import type { CertificateProfile, SingleValueRule } from './types.js';

export interface CertificateElements {
  labels: readonly KeyValue[];
  owner: string | null;
  team: string | null;
  contactEmail: string | null;
}

export interface ElementChanges {
  labels?: readonly KeyValue[];
  owner?: string | null;
  team?: string | null;
  contactEmail?: string | null;
}

const SINGLE = ['owner', 'team', 'contactEmail'] as const;

const notEditable = (profile: CertificateProfile, what: string): ProblemError =>
  new ProblemError('PRF-011', { message: `${what} is not editable`, detail: `${what} is not editable in profile ${profile.name}` });
const mandatory = (profile: CertificateProfile, what: string): ProblemError =>
  new ProblemError('PRF-010', { detail: `${what} is mandatory in profile ${profile.name}` });

const valueOf = (labels: readonly KeyValue[], name: string): string | null => labels.find((l) => l.key === name)?.value ?? null;
const blank = (v: string | null | undefined): boolean => !nonEmpty(v);

export function applyElementRules<C extends ElementChanges>(profile: CertificateProfile, current: CertificateElements, changes: C, entering: boolean): C {
  const touched = new Set<string>();
  if (changes.labels) {
    for (const name of new Set([...current.labels, ...changes.labels].map((l) => l.key))) {
      if (valueOf(current.labels, name) !== valueOf(changes.labels, name)) touched.add(name);
    }
  }
  for (const name of touched) {
    const rule = profile.labels.find((l) => l.label === name);
    if (!rule) throw labelNotAuthorized(profile, name);
    // Entering a profile, a label may be set to the value the profile fixes for it (it would be anyway).
    if (rule.editable === false && !(entering && !blank(rule.value) && valueOf(changes.labels ?? [], name) === rule.value)) throw notEditable(profile, `label ${name}`);
  }
  const out: C = { ...changes };
  let after = changes.labels ?? current.labels;
  if (entering) {
    const fixed = profile.labels.filter((r) => r.editable === false && !blank(r.value));
    if (fixed.some((r) => valueOf(after, r.label) !== r.value)) {
      after = [...after.filter((l) => !fixed.some((r) => r.label === l.key)), ...fixed.map((r) => ({ key: r.label, value: r.value! }))];
      out.labels = after as C['labels'];
    }
  }
  for (const rule of profile.labels) {
    if (rule.mandatory && (entering || touched.has(rule.label)) && blank(valueOf(after, rule.label))) throw mandatory(profile, `label ${rule.label}`);
  }
  for (const name of SINGLE) {
    const rule: SingleValueRule = profile[name];
    const changed = changes[name] !== undefined && (changes[name] ?? null) !== current[name];
    if (changed && rule.editable === false) throw notEditable(profile, name);
    if (entering && rule.editable === false && !blank(rule.value) && current[name] !== rule.value) out[name] = rule.value as C[typeof name];
    const value = out[name] !== undefined ? out[name] : current[name];
    if (rule.mandatory && (entering || changed) && blank(value)) throw mandatory(profile, name);
    if (changed && name === 'contactEmail' && !blank(value)) checkContactEmail(value!);
  }
  return out;
}
