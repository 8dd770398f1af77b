/**
 * A profile's template as clients see it (POST /api/v1/requests/template, client-compat §2.3 and §10), and
 * a submitted template resolved against the profile (what the request workflows issue).
 *
 * Resolution rules (ProfileService.resolve):
 * - Subject: one entry per profile element, in the profile's order (list them as the DN reads, CN first:
 *   the RFC 4514 string is written in that order, so the last element is the first RDN). An editable
 *   element takes the submitted value, else — decentralized — the CSR's value of the same element (`cn.1` =
 *   the CSR's first CN in DER order), else the profile's default; a non-editable element always takes the
 *   profile's value. CSR attributes the profile does not list are not issued. A submitted element the
 *   profile does not list is refused (PRF-017).
 * - SANs: per profile SAN type the same way (submitted values of the type, else the CSR's of that type, else
 *   the profile's); CSR SANs of types the profile does not list are dropped; submitted values of such a
 *   type are refused (PRF-017). Count within min..max (PRF-012), each value matches the regex (PRF-011).
 * - Labels, owner, team, contactEmail: editable → submitted value (`null` clears), else the profile's
 *   value; mandatory must end non-empty (PRF-010). A submitted label the profile does not list: PRF-013
 *   "Label element <name> is not authorized". For `update` the caller merges the template over the
 *   certificate's current values first (element absent = keep is the caller's), then resolves.
 * - Key type: the CSR's (decentralized) or the submitted `keyType`, else the profile's default; outside the
 *   key types Certwright issues → PRF-015 "Unknown algorithm", not authorized by the profile → PRF-014
 *   (enroll and renew; other workflows take the CSR's key type as it is). Mode: a CSR means decentralized,
 *   none centralized; the profile must allow it (PRF-016, enroll and renew).
 * - keyEncipherment is dropped from the key usages for non-RSA keys.
 * - Computation rules (computation.ts): an element's computed value stands for the profile's value (a fixed
 *   element takes it), and for an editable element comes after the requester's value and before the CSR's.
 */
import { isIP } from 'node:net';
import { ProblemError } from '../errors/index.js';
import type { KeyValue } from '../inventory/types.js';
import { escapeDnValue, type DnElement } from '../pki/names.js';
import type { SubjectAlternateName } from '../pki/x509/model.js';
import { elementNameOf, isKeyType, sanTypeOf } from './model.js';
import type { ComputedValues } from './computation.js';
import type { CertificateProfile, CsrFacts, EnrollmentMode, KeyTypeName, ResolvedTemplate, SingleValueRule, Workflow } from './types.js';
import { wholeRegex } from './validate.js';

type Submitted = Record<string, unknown>;
type SanType = SubjectAlternateName['sanType'];

const malformed = (detail: string): ProblemError => new ProblemError('PRF-018', { detail });
const missing = (detail: string): ProblemError => new ProblemError('PRF-010', { detail });
const refused = (detail: string): ProblemError => new ProblemError('PRF-011', { detail });
const notAuthorized = (detail: string): ProblemError => new ProblemError('PRF-017', { detail });

/** PRF-013: a label the profile does not list (Horizon's message). */
export const labelNotAuthorized = (profile: CertificateProfile, name: string): ProblemError =>
  new ProblemError('PRF-013', { message: `Label element ${name} is not authorized`, detail: `Label element ${name} is not authorized by profile ${profile.name}` });

/** PRF-011 unless `value` looks like an email address. */
export function checkContactEmail(value: string): void {
  if (!/^[^@\s]+@[^@\s]+$/.test(value)) throw refused(`contactEmail ${JSON.stringify(value)} is not an email address`);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const nonEmpty = (v: string | null | undefined): v is string => typeof v === 'string' && v.trim() !== '';

function listOf(submitted: Submitted | undefined, key: string): Record<string, unknown>[] {
  const value = submitted?.[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw malformed(`template.${key} must be an array`);
  return value.map((entry, i) => {
    if (!isRecord(entry)) throw malformed(`template.${key}[${i}] must be an object`);
    return entry;
  });
}

/** A submitted value: a string, null (cleared) or absent; numbers and booleans are taken as text. */
function textOf(value: unknown, where: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw malformed(`${where} must be a string`);
}

// ---------------------------------------------------------------------------------------------------------
// Submitted parts

/** Submitted subject values by canonical element (`cn.1`); `null` = explicitly empty. */
function submittedSubject(submitted: Submitted | undefined): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const counts = new Map<string, number>();
  listOf(submitted, 'subject').forEach((entry, i) => {
    const where = `template.subject[${i}]`;
    let raw = typeof entry.element === 'string' ? entry.element : undefined;
    // An entry with only a type (CN): the next index of that type.
    if (raw === undefined && typeof entry.type === 'string') {
      const n = (counts.get(entry.type.toLowerCase()) ?? 0) + 1;
      counts.set(entry.type.toLowerCase(), n);
      raw = `${entry.type}.${n}`;
    }
    if (raw === undefined) throw malformed(`${where} has no element`);
    const name = elementNameOf(raw);
    if (!name) throw notAuthorized(`Subject element ${raw} is not authorized (unknown attribute)`);
    const value = textOf(entry.value, `${where}.value`);
    if (value !== undefined) out.set(name.element, value);
  });
  return out;
}

/** Submitted SAN values by type; a type present with [] / null means "none". Also the pre-2.4 `{element: "dnsname.1", value}`. */
function submittedSans(submitted: Submitted | undefined): Map<SanType, string[]> {
  const out = new Map<SanType, string[]>();
  listOf(submitted, 'sans').forEach((entry, i) => {
    const where = `template.sans[${i}]`;
    const rawType = typeof entry.type === 'string' ? entry.type : typeof entry.sanType === 'string' ? entry.sanType : typeof entry.element === 'string' ? entry.element : undefined;
    if (rawType === undefined) throw malformed(`${where} has no type`);
    const type = sanTypeOf(rawType);
    if (!type) throw notAuthorized(`SAN type ${rawType} is not authorized (unknown type)`);
    const values = out.get(type) ?? [];
    const value = entry.value;
    if (Array.isArray(value)) value.forEach((v, j) => values.push(textOf(v, `${where}.value[${j}]`) ?? ''));
    else {
      const single = textOf(value, `${where}.value`);
      if (single) values.push(single);
    }
    out.set(type, values);
  });
  return out;
}

/** Submitted labels by name (`{label, value}`, also `{key, value}`); `null` = cleared. */
function submittedLabels(submitted: Submitted | undefined): Map<string, string | null> {
  const out = new Map<string, string | null>();
  listOf(submitted, 'labels').forEach((entry, i) => {
    const name = typeof entry.label === 'string' ? entry.label : typeof entry.key === 'string' ? entry.key : undefined;
    if (name === undefined) throw malformed(`template.labels[${i}] has no label`);
    out.set(name, textOf(entry.value, `template.labels[${i}].value`) ?? null);
  });
  return out;
}

/** `owner: {value}` or a bare string; undefined when absent, null when cleared. */
function submittedSingle(submitted: Submitted | undefined, key: string): string | null | undefined {
  const value = submitted?.[key];
  if (value === undefined) return undefined;
  if (isRecord(value)) return 'value' in value ? textOf(value.value, `template.${key}.value`) ?? null : undefined;
  return textOf(value, `template.${key}`);
}

/** What a template submits, element by element, as resolution reads it (computation rules read it too). */
export function submittedValues(submitted: Submitted | undefined) {
  return {
    subject: submittedSubject(submitted),
    sans: submittedSans(submitted),
    labels: submittedLabels(submitted),
    owner: submittedSingle(submitted, 'owner'),
    team: submittedSingle(submitted, 'team'),
    contactEmail: submittedSingle(submitted, 'contactEmail'),
  };
}

/** RFC 4514 string (last RDN first) → its attributes in DER order, as dnElements. */
export function dnElementsOf(dn: string): DnElement[] {
  const split = (text: string, sep: string): string[] => {
    const out: string[] = [];
    let current = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\\' && i + 1 < text.length) current += c + text[++i];
      else if (c === sep) {
        out.push(current);
        current = '';
      } else current += c;
    }
    out.push(current);
    return out;
  };
  const unescape = (raw: string): string => {
    const bytes: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      const c = raw[i]!;
      if (c === '\\' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) {
        bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
        i += 2;
      } else if (c === '\\' && i + 1 < raw.length) bytes.push(...Buffer.from(raw[++i]!, 'utf8'));
      else bytes.push(...Buffer.from(c, 'utf8'));
    }
    return Buffer.from(bytes).toString('utf8');
  };
  if (dn.trim() === '') return [];
  const counts = new Map<string, number>();
  const out: DnElement[] = [];
  for (const rdn of split(dn, ',').reverse()) {
    for (const pair of split(rdn, '+')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = elementNameOf(pair.slice(0, eq).trim());
      if (!name) continue;
      const base = name.element.replace(/\.\d+$/, '');
      const n = (counts.get(base) ?? 0) + 1;
      counts.set(base, n);
      out.push({ element: `${base}.${n}`, type: name.type, value: unescape(pair.slice(eq + 1).trim()) });
    }
  }
  return out;
}

function csrSubject(csr: CsrFacts | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!csr) return out;
  for (const e of csr.dnElements ?? dnElementsOf(csr.subject)) {
    const name = elementNameOf(e.element);
    if (name && !out.has(name.element)) out.set(name.element, e.value);
  }
  return out;
}

function csrSans(csr: CsrFacts | undefined): Map<SanType, string[]> {
  const out = new Map<SanType, string[]>();
  for (const san of csr?.sans ?? []) out.set(san.sanType, [...(out.get(san.sanType) ?? []), san.value]);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Resolution of each part

interface SubjectValue {
  element: string;
  type: string;
  attribute: string;
  value: string;
}

function subjectValues(profile: CertificateProfile, submitted: Submitted | undefined, csr: CsrFacts | undefined, strict: boolean, computed?: ComputedValues): SubjectValue[] {
  const given = submittedSubject(submitted);
  const fromCsr = csrSubject(csr);
  const listed = new Set<string>();
  const out: SubjectValue[] = [];
  for (const rule of profile.subject) {
    const name = elementNameOf(rule.element)!;
    listed.add(name.element);
    const computedValue = computed?.subject.get(name.element);
    let value: string;
    if (rule.editable === false) value = computedValue ?? rule.value ?? '';
    else {
      // Submitted, else computed, else the CSR's, else (not sent at all) the profile's default; sent empty stays empty.
      const sent = given.get(name.element);
      value = nonEmpty(sent) ? sent : (computedValue ?? fromCsr.get(name.element) ?? (sent === undefined ? (rule.value ?? '') : ''));
    }
    value = value.trim();
    if (strict) {
      if (rule.mandatory && value === '') throw missing(`subject element ${name.element} is mandatory`);
      if (value !== '' && rule.regex && !wholeRegex(rule.regex)!.test(value)) throw refused(`subject element ${name.element}: ${JSON.stringify(value)} does not match ${rule.regex}`);
    }
    out.push({ element: name.element, type: name.type, attribute: name.attribute, value });
  }
  if (strict) for (const [element, value] of given) if (!listed.has(element) && nonEmpty(value)) throw notAuthorized(`Subject element ${element} is not authorized by profile ${profile.name}`);
  return out;
}

function sanValues(profile: CertificateProfile, submitted: Submitted | undefined, csr: CsrFacts | undefined, strict: boolean, computed?: ComputedValues): Map<SanType, string[]> {
  const given = submittedSans(submitted);
  const fromCsr = csrSans(csr);
  const out = new Map<SanType, string[]>();
  for (const rule of profile.sans) {
    const computedValue = computed?.sans.get(rule.type);
    let values: string[];
    if (rule.editable === false) values = computedValue ?? rule.value ?? [];
    else {
      // As for the subject: submitted values, else computed, else the CSR's, else (type not sent at all) the profile's.
      const sent = given.get(rule.type);
      values = sent?.some((v) => v !== '') ? sent : (computedValue ?? fromCsr.get(rule.type) ?? (sent === undefined ? (rule.value ?? []) : []));
    }
    values = [...new Set(values.map((v) => v.trim()).filter((v) => v !== ''))];
    if (strict) {
      const min = rule.min ?? 0;
      const max = rule.max ?? Infinity;
      if (values.length < min || values.length > max) throw new ProblemError('PRF-012', { detail: `SAN type ${rule.type}: ${values.length} value(s), the profile allows ${min} to ${max}` });
      const regex = rule.regex ? wholeRegex(rule.regex) : null;
      for (const v of values) {
        if (regex && !regex.test(v)) throw refused(`SAN ${rule.type} ${JSON.stringify(v)} does not match ${rule.regex}`);
        if (rule.type === 'IPADDRESS' && isIP(v) === 0) throw refused(`SAN IPADDRESS ${JSON.stringify(v)} is not an IP address`);
      }
    }
    out.set(rule.type, values);
  }
  if (strict) {
    for (const [type, values] of given) {
      if (!out.has(type) && values.some((v) => v !== '')) throw notAuthorized(`SAN type ${type} is not authorized by profile ${profile.name}`);
    }
  }
  return out;
}

function labelValues(profile: CertificateProfile, submitted: Submitted | undefined, strict: boolean, computed?: ComputedValues): { label: string; value: string | null }[] {
  const given = submittedLabels(submitted);
  const listed = new Set(profile.labels.map((l) => l.label));
  if (strict) {
    for (const name of given.keys()) {
      if (!listed.has(name)) throw labelNotAuthorized(profile, name);
    }
  }
  return profile.labels.map((rule) => {
    // A computed value stands for the profile's; the requester's, where editable, comes over both.
    let value: string | null = computed?.labels.has(rule.label) ? computed.labels.get(rule.label)! : (rule.value ?? null);
    if (rule.editable !== false && given.has(rule.label)) value = given.get(rule.label) ?? null;
    if (value !== null && value.trim() === '') value = null;
    if (strict && rule.mandatory && value === null) throw missing(`label ${rule.label} is mandatory`);
    return { label: rule.label, value };
  });
}

function singleValue(key: 'owner' | 'team' | 'contactEmail', rule: SingleValueRule, submitted: Submitted | undefined, strict: boolean, computed?: ComputedValues): string | null {
  let value: string | null = computed && computed[key] !== undefined ? computed[key]! : (rule.value ?? null);
  if (rule.editable !== false) {
    const sent = submittedSingle(submitted, key);
    if (sent !== undefined) value = sent;
  }
  if (value !== null && value.trim() === '') value = null;
  if (strict) {
    if (rule.mandatory && value === null) throw missing(`${key} is mandatory`);
    if (key === 'contactEmail' && value !== null) checkContactEmail(value);
  }
  return value;
}

const KEY_WORKFLOWS: readonly Workflow[] = ['enroll', 'renew'];

function keyOf(profile: CertificateProfile, workflow: Workflow, submitted: Submitted | undefined, csr: CsrFacts | undefined): { keyType: KeyTypeName; mode: EnrollmentMode } {
  const mode: EnrollmentMode = csr ? 'decentralized' : 'centralized';
  const checked = KEY_WORKFLOWS.includes(workflow);
  if (checked && !profile.keyPolicy[mode]) throw new ProblemError('PRF-016', { detail: `profile ${profile.name} does not allow ${mode} enrollment` });
  const sent = typeof submitted?.keyType === 'string' && submitted.keyType.trim() !== '' ? submitted.keyType.trim() : undefined;
  const keyType = csr ? csr.keyType : (sent ?? profile.keyPolicy.defaultKeyType);
  if (!isKeyType(keyType)) {
    if (checked) throw new ProblemError('PRF-015', { message: `Unknown algorithm ${keyType}`, detail: `Unknown algorithm ${keyType}: Certwright issues rsa-2048, rsa-3072, rsa-4096, ec-secp256r1, ec-secp384r1, ec-secp521r1, ed-25519` });
    return { keyType: profile.keyPolicy.defaultKeyType, mode };
  }
  if (checked && !profile.keyPolicy.authorizedKeyTypes.includes(keyType)) {
    throw new ProblemError('PRF-014', { detail: `key type ${keyType} is not authorized by profile ${profile.name} (${profile.keyPolicy.authorizedKeyTypes.join(', ')})` });
  }
  return { keyType, mode };
}

/** Metadata a client may not set: the workflows write them. */
const SERVER_METADATA = new Set(['pki_connector', 'renewed_certificate_id', 'previous_certificate_id']);

function metadataOf(submitted: Submitted | undefined): KeyValue[] {
  const out: KeyValue[] = [];
  listOf(submitted, 'metadata').forEach((entry, i) => {
    const key = typeof entry.metadata === 'string' ? entry.metadata : typeof entry.key === 'string' ? entry.key : undefined;
    if (key === undefined) throw malformed(`template.metadata[${i}] has no metadata name`);
    const value = textOf(entry.value, `template.metadata[${i}].value`);
    if (!SERVER_METADATA.has(key) && nonEmpty(value)) out.push({ key, value });
  });
  return out;
}

/** The subject as RFC 4514 writes it, elements in the template's order (the last one is the first RDN). */
const dnOf = (values: readonly SubjectValue[]): string =>
  values
    .filter((v) => v.value !== '')
    .map((v) => `${v.attribute}=${escapeDnValue(v.value)}`)
    .join(',');

const SUBJECT_WORKFLOWS: readonly Workflow[] = ['enroll', 'renew', 'import', 'migrate', 'recover'];

/** `computed`: what the profile's computation rules computed for this request (computation.ts). */
export function resolveTemplate(profile: CertificateProfile, workflow: Workflow, submitted: Submitted, csr?: CsrFacts, computed?: ComputedValues): ResolvedTemplate {
  if (!isRecord(submitted)) throw malformed('the template must be an object');
  const withSubject = SUBJECT_WORKFLOWS.includes(workflow);
  const subject = withSubject ? subjectValues(profile, submitted, csr, true, computed) : [];
  const sans = withSubject ? sanValues(profile, submitted, csr, true, computed) : new Map<SanType, string[]>();
  const labels = labelValues(profile, submitted, true, computed);
  const owner = singleValue('owner', profile.owner, submitted, true, computed);
  const team = singleValue('team', profile.team, submitted, true, computed);
  const contactEmail = singleValue('contactEmail', profile.contactEmail, submitted, true, computed);
  const { keyType, mode } = keyOf(profile, workflow, submitted, csr);
  return {
    subject: dnOf(subject),
    sans: [...sans].flatMap(([sanType, values]) => values.map((value) => ({ sanType, value }))),
    labels: labels.filter((l): l is { label: string; value: string } => l.value !== null).map((l) => ({ key: l.label, value: l.value })),
    metadata: metadataOf(submitted),
    ...(owner !== null ? { owner } : {}),
    ...(team !== null ? { team } : {}),
    ...(contactEmail !== null ? { contactEmail } : {}),
    keyType,
    mode,
    validityDays: profile.validityDays,
    keyUsage: keyType.startsWith('rsa-') ? [...profile.keyUsage] : profile.keyUsage.filter((u) => u !== 'keyEncipherment'),
    extendedKeyUsage: [...profile.extendedKeyUsage],
  };
}

// ---------------------------------------------------------------------------------------------------------
// Template objects

export function capabilitiesOf(profile: CertificateProfile): Record<string, unknown> {
  const k = profile.keyPolicy;
  return {
    centralized: k.centralized,
    decentralized: k.decentralized,
    preferredEnrollmentMode: k.preferredEnrollmentMode,
    defaultKeyType: k.defaultKeyType,
    authorizedKeyTypes: [...k.authorizedKeyTypes],
    escrow: k.escrow,
    p12passwordMode: k.p12passwordMode,
    p12PasswordMode: k.p12passwordMode,
    showP12OnEnroll: k.showP12OnEnroll,
    showP12PasswordOnEnroll: k.showP12PasswordOnEnroll,
  };
}

function keyPart(profile: CertificateProfile, submitted: Submitted | undefined, csr: CsrFacts | undefined): Record<string, unknown> {
  const sent = typeof submitted?.keyType === 'string' && isKeyType(submitted.keyType) && profile.keyPolicy.authorizedKeyTypes.includes(submitted.keyType) ? submitted.keyType : undefined;
  const out: Record<string, unknown> = { keyType: csr?.keyType ?? sent ?? profile.keyPolicy.defaultKeyType, capabilities: capabilitiesOf(profile) };
  if (typeof submitted?.csr === 'string') out.csr = submitted.csr;
  // client-compat §10: only when the requester chooses the password (Ansible passes it on as the policy's name).
  if (profile.keyPolicy.p12passwordMode === 'manual') out.passwordPolicy = { name: profile.keyPolicy.passwordPolicy ?? 'Default' };
  return out;
}

function ownershipPart(profile: CertificateProfile, submitted: Submitted | undefined): Record<string, unknown> {
  const labels = labelValues(profile, submitted, false);
  const single = (key: 'owner' | 'team' | 'contactEmail') => {
    const rule = profile[key];
    return { value: singleValue(key, rule, submitted, false), editable: rule.editable !== false, mandatory: rule.mandatory === true };
  };
  return {
    labels: profile.labels.map((rule, i) => ({ label: rule.label, value: labels[i]!.value, mandatory: rule.mandatory === true, editable: rule.editable !== false })),
    owner: single('owner'),
    team: single('team'),
    contactEmail: single('contactEmail'),
  };
}

export function templateObject(profile: CertificateProfile, workflow: Workflow, submitted?: Record<string, unknown>, csr?: CsrFacts): Record<string, unknown> {
  const given = isRecord(submitted) ? submitted : undefined;
  switch (workflow) {
    case 'enroll': {
      const subject = subjectValues(profile, given, csr, false);
      const sans = sanValues(profile, given, csr, false);
      return {
        subject: profile.subject.map((rule, i) => ({
          element: subject[i]!.element,
          type: subject[i]!.type,
          value: subject[i]!.value,
          mandatory: rule.mandatory === true,
          editable: rule.editable !== false,
          ...(rule.regex ? { regex: rule.regex } : {}),
        })),
        sans: profile.sans.map((rule) => ({
          type: rule.type,
          value: sans.get(rule.type) ?? [],
          editable: rule.editable !== false,
          min: rule.min ?? 0,
          max: rule.max ?? 0,
          ...(rule.regex ? { regex: rule.regex } : {}),
        })),
        ...ownershipPart(profile, given),
        ...keyPart(profile, given, csr),
      };
    }
    case 'renew':
      return keyPart(profile, given, csr);
    case 'revoke':
      return { revocationReason: typeof given?.revocationReason === 'string' ? given.revocationReason : null };
    case 'update':
    case 'migrate':
    case 'import':
      return ownershipPart(profile, given);
    case 'recover':
      return profile.keyPolicy.p12passwordMode === 'manual' ? { passwordPolicy: { name: profile.keyPolicy.passwordPolicy ?? 'Default' } } : {};
  }
}
