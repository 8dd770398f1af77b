/**
 * Horizon's `certificateTemplate` ⇄ Certwright's subject, sans, labels, owner, team and contactEmail: one
 * mapping per part, so a client may send some parts in either form. editableByRequester is `editable`.
 *
 * - subject: Horizon types each element (`CN`, `OU`, …) and numbers repeated ones by their order; Certwright
 *   names them `cn.1`, `ou.2`. An element whose index is not its order is answered as its name (`ou.2`).
 * - Certwright settings Horizon cannot say are kept from the Certwright form (or the defaults): the default
 *   values of a SAN type, the fixed value of the owner.
 * - computationRule is the same on both sides (answered only when set).
 * - Horizon-only settings refused when set (Certwright has no counterpart, see common.ts): editableByApprover true, label regex / enum / suggestions, team and contact regex / whitelist, the
 *   policies' descriptions, extensions (Microsoft ms_sid / ms_template), metadataPolicies.
 */
import { DEFAULT_SAN_MAX, elementNameOf, sanTypeOf } from '../model.js';
import type { LabelRule, SanRule, SingleValueRule, SubjectElementRule } from '../types.js';
import { invalid, notEditableByApprover, only, type Json } from './common.js';

const REQUESTER = (editable: boolean | undefined) => ({ editableByRequester: editable ?? true, editableByApprover: false });
const base = (element: string): string => element.replace(/\.\d+$/, '');
const given = <T>(sent: T | null | undefined, kept: T): T => (sent === undefined || sent === null ? kept : sent);
/** A rule as answered (only when set) and as taken (absent: kept; null or empty: none). */
const ruleOut = (rule: { computationRule?: string | null }): Json => (rule.computationRule ? { computationRule: rule.computationRule } : {});
function ruleIn(sent: unknown, before: { computationRule?: string | null } | undefined): { computationRule?: string } {
  const text = sent === undefined ? before?.computationRule : sent;
  return typeof text === 'string' && text !== '' ? { computationRule: text } : {};
}

export function subjectOf(rules: readonly SubjectElementRule[]): Json[] {
  const seen = new Map<string, number>();
  return rules.map((rule) => {
    const attribute = base(rule.element);
    const order = (seen.get(attribute) ?? 0) + 1;
    seen.set(attribute, order);
    const index = elementNameOf(rule.element)?.index ?? order;
    return { type: index === order ? attribute.toUpperCase() : rule.element, value: rule.value ?? null, mandatory: rule.mandatory ?? false, ...REQUESTER(rule.editable), regex: rule.regex ?? null, ...ruleOut(rule) };
  });
}

export function applySubject(sent: Json[], current: readonly SubjectElementRule[]): SubjectElementRule[] {
  const seen = new Map<string, number>();
  return sent.map((h, i) => {
    const where = `certificateTemplate.subject[${i}]`;
    notEditableByApprover(where, h.editableByApprover);
    const name = elementNameOf(String(h.type));
    if (!name) throw invalid(`${where}.type: unknown subject element type ${JSON.stringify(h.type)} (CN, OU, O, L, ST, C, E, UID, DC, SERIALNUMBER, GIVENNAME, SURNAME, STREET, T)`);
    const attribute = base(name.element);
    const order = (seen.get(attribute) ?? 0) + 1;
    seen.set(attribute, order);
    const element = /\.\d+$/.test(String(h.type)) ? name.element : `${attribute}.${order}`;
    const before = current.find((r) => r.element === element);
    return {
      element,
      value: h.value !== undefined ? (h.value as string | null) : (before?.value ?? null),
      mandatory: given(h.mandatory as boolean | null | undefined, before?.mandatory ?? false),
      editable: given(h.editableByRequester as boolean | null | undefined, before?.editable ?? true),
      regex: h.regex !== undefined ? (h.regex as string | null) : (before?.regex ?? null),
      ...ruleIn(h.computationRule, before),
    };
  });
}

export const sansOf = (rules: readonly SanRule[]): Json[] =>
  rules.map((rule) => ({ type: rule.type, min: rule.min ?? 0, max: rule.max ?? DEFAULT_SAN_MAX, regex: rule.regex ?? null, ...REQUESTER(rule.editable), ...ruleOut(rule) }));

export function applySans(sent: Json[], current: readonly SanRule[]): SanRule[] {
  return sent.map((h, i) => {
    const where = `certificateTemplate.sans[${i}]`;
    notEditableByApprover(where, h.editableByApprover);
    const type = sanTypeOf(String(h.type));
    if (!type) throw invalid(`${where}.type: unknown SAN type ${JSON.stringify(h.type)} (DNSNAME, IPADDRESS, RFC822NAME, URI, OTHERNAME_UPN, OTHERNAME_GUID, REGISTERED_ID)`);
    const before = current.find((r) => r.type === type);
    const rule: SanRule = {
      type,
      value: before?.value ?? [],
      editable: given(h.editableByRequester as boolean | null | undefined, before?.editable ?? true),
      min: given(h.min as number | null | undefined, before?.min ?? 0),
      regex: h.regex !== undefined ? (h.regex as string | null) : (before?.regex ?? null),
      ...ruleIn(h.computationRule, before),
    };
    const max = given(h.max as number | null | undefined, before?.max);
    return max === undefined ? rule : { ...rule, max };
  });
}

export const labelsOf = (rules: readonly LabelRule[]): Json[] =>
  rules.map((rule) => ({ label: rule.label, value: rule.value ?? null, mandatory: rule.mandatory ?? false, ...REQUESTER(rule.editable), ...ruleOut(rule) }));

export function applyLabels(sent: Json[], current: readonly LabelRule[]): LabelRule[] {
  return sent.map((h, i) => {
    const where = `certificateTemplate.labels[${i}]`;
    notEditableByApprover(where, h.editableByApprover);
    const why = 'a Certwright label rule has a value, mandatory and editable only (the label itself may carry a regex: /api/v1/certificate/labels)';
    only(`${where}.regex`, h.regex, undefined, why);
    only(`${where}.enum`, h.enum, undefined, why);
    only(`${where}.suggestions`, h.suggestions, undefined, why);
    const before = current.find((r) => r.label === h.label);
    return {
      label: String(h.label),
      value: h.value !== undefined ? (h.value as string | null) : (before?.value ?? null),
      mandatory: given(h.mandatory as boolean | null | undefined, before?.mandatory ?? false),
      editable: given(h.editableByRequester as boolean | null | undefined, before?.editable ?? true),
      ...ruleIn(h.computationRule, before),
    };
  });
}

/** ownerPolicy has no value (Horizon computes owners); teamPolicy and contactEmailPolicy have one. */
export const singleOf = (rule: SingleValueRule, withValue: boolean): Json => ({
  mandatory: rule.mandatory ?? false,
  ...REQUESTER(rule.editable),
  ...(withValue ? { value: rule.value ?? null } : {}),
  ...ruleOut(rule),
});

export function applySingle(where: string, sent: Json, current: SingleValueRule, withValue: boolean): SingleValueRule {
  notEditableByApprover(where, sent.editableByApprover);
  const why = 'Certwright has no regex or whitelist rule for the team or the contact email';
  only(`${where}.regex`, sent.regex, undefined, why);
  only(`${where}.whitelist`, sent.whitelist, undefined, why);
  only(`${where}.description`, sent.description, undefined, 'Certwright keeps no description for template elements');
  return {
    value: withValue && sent.value !== undefined ? (sent.value as string | null) : (current.value ?? null),
    mandatory: given(sent.mandatory as boolean | null | undefined, current.mandatory ?? false),
    editable: given(sent.editableByRequester as boolean | null | undefined, current.editable ?? true),
    ...ruleIn(sent.computationRule, current),
  };
}

/** The parts Certwright has nothing for: refused unless empty. */
export function checkTemplateExtras(template: Json): void {
  only('certificateTemplate.extensions', template.extensions, undefined, 'Certwright adds no Microsoft template or SID extension (ms_sid, ms_template, ms_template_v2)');
  only('certificateTemplate.metadataPolicies', template.metadataPolicies, undefined, 'Certwright sets a request\'s metadata itself, not from the profile');
}
