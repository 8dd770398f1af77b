/**
 * Checks a profile a client sends and fills in its defaults: the JSON schema (unknown fields refused),
 * then what a schema cannot say — element names the certificate encoder knows, regexes that compile,
 * default key type among the authorized ones, at least one enrollment mode, min ≤ max, fixed values that
 * satisfy their own rules, known extended key usages, an existing PKI connector and password policies.
 * Every refusal is PRF-002 with a detail naming the field.
 */
import { checkComputationRule } from './computation.js';
import { HOLDER_POP, HOLDER_POP_WORKFLOWS } from './rights.js';
import { localizedOf, type LocalizedText } from '../http/localized-text.js';
import { Ajv, type ErrorObject } from 'ajv';
import type { Knex } from 'knex';
import { ProblemError } from '../errors/index.js';
import { EXTENDED_KEY_USAGES } from '../pki/oids.js';
import { PasswordPolicyService } from '../security/password-policies/service.js';
import { certwrightPart, hasHorizonKeys, mergeHorizon } from './horizon/index.js';
import { DEFAULT_SAN_MAX, defaultProfile, elementNameOf, KNOWN_ELEMENTS } from './model.js';
import { profileInputSchema } from './schema.js';
import type { CertificateProfile, LabelRule, SanRule, SingleValueRule, SubjectElementRule, Workflow } from './types.js';

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: false, coerceTypes: false });
const validateInput = ajv.compile(profileInputSchema);

const invalid = (detail: string): ProblemError => new ProblemError('PRF-002', { detail });

const schemaDetail = (error: ErrorObject | undefined): string => {
  if (!error) return 'the profile does not match its schema';
  const where = error.instancePath || 'profile';
  if (error.keyword === 'additionalProperties') return `${where}: unknown field "${String((error.params as { additionalProperty?: string }).additionalProperty)}"`;
  if (error.keyword === 'enum') return `${where} ${error.message ?? ''}: ${((error.params as { allowedValues?: unknown[] }).allowedValues ?? []).join(', ')}`;
  return `${where} ${error.message ?? 'is not valid'}`;
};

/** The regex a value must match in whole (`^(?:…)$`); null when it does not compile. */
export function wholeRegex(source: string): RegExp | null {
  try {
    return new RegExp(`^(?:${source})$`);
  } catch {
    return null;
  }
}

const EKU_NAMES = new Map(Object.values(EXTENDED_KEY_USAGES).map((name) => [name.toLowerCase(), name]));
const OID = /^[0-2](\.(0|[1-9][0-9]*))+$/;

/** A localised text field as stored: present only when it has a text. */
const localizedField = <K extends string>(key: K, given: LocalizedText[] | string | null | undefined): Partial<Record<K, LocalizedText[]>> => {
  const list = localizedOf(given).filter((t) => t.value !== '');
  return list.length > 0 ? ({ [key]: list } as Record<K, LocalizedText[]>) : {};
};

/** What a client sends: a CertificateProfile with every field but name and pkiConnector optional, nested ones partial. */
export type ProfileInput = Partial<Omit<CertificateProfile, 'keyPolicy' | 'authorizations' | 'challenge' | 'description' | 'displayName'>> & {
  name: string;
  pkiConnector: string;
  description?: LocalizedText[] | string | null;
  displayName?: LocalizedText[] | string | null;
  keyPolicy?: Partial<CertificateProfile['keyPolicy']>;
  authorizations?: Partial<CertificateProfile['authorizations']>;
  challenge?: Partial<CertificateProfile['challenge']>;
  _id?: string;
  version?: number;
};

const nonEmpty = (v: string | null | undefined): v is string => typeof v === 'string' && v !== '';

function checkRegex(where: string, regex: string | null | undefined): RegExp | null {
  if (regex === null || regex === undefined || regex === '') return null;
  const compiled = wholeRegex(regex);
  if (!compiled) throw invalid(`${where}: the regex ${JSON.stringify(regex)} does not compile`);
  return compiled;
}

/** A computation rule that parses (PRF-002 naming the element and the position otherwise), kept only when set. */
function withRule(where: string, text: string | null | undefined): { computationRule?: string } {
  if (!text) return {};
  checkComputationRule(where, text);
  return { computationRule: text };
}

function subjectRule(rule: SubjectElementRule, i: number, seen: Set<string>): SubjectElementRule {
  const where = `subject[${i}]`;
  const name = elementNameOf(rule.element);
  if (!name) throw invalid(`${where}: unknown subject element "${rule.element}" (attribute + 1-based index, e.g. cn.1, ou.2; attributes: ${KNOWN_ELEMENTS.join(', ')})`);
  if (seen.has(name.element)) throw invalid(`${where}: subject element ${name.element} is listed twice`);
  seen.add(name.element);
  const out: SubjectElementRule = { element: name.element, value: rule.value ?? null, mandatory: rule.mandatory ?? false, editable: rule.editable ?? true, regex: rule.regex || null, ...withRule(`${where} (${name.element})`, rule.computationRule) };
  const regex = checkRegex(`${where} (${name.element})`, out.regex);
  if (nonEmpty(out.value) && regex && !regex.test(out.value)) throw invalid(`${where} (${name.element}): the value does not match the element's own regex`);
  if (!out.editable && out.mandatory && !nonEmpty(out.value) && !out.computationRule) throw invalid(`${where} (${name.element}): a mandatory element that is not editable needs a value (or a computation rule)`);
  return out;
}

function sanRule(rule: SanRule, i: number, seen: Set<string>): SanRule {
  const where = `sans[${i}] (${rule.type})`;
  if (seen.has(rule.type)) throw invalid(`${where}: SAN type ${rule.type} is listed twice`);
  seen.add(rule.type);
  const out: SanRule = { type: rule.type, value: (rule.value ?? []).filter(nonEmpty), editable: rule.editable ?? true, min: rule.min ?? 0, max: rule.max ?? Math.max(DEFAULT_SAN_MAX, rule.min ?? 0), regex: rule.regex || null, ...withRule(where, rule.computationRule) };
  if (out.min! > out.max!) throw invalid(`${where}: min (${out.min}) is greater than max (${out.max})`);
  const regex = checkRegex(where, out.regex);
  if (regex) for (const v of out.value!) if (!regex.test(v)) throw invalid(`${where}: the value ${JSON.stringify(v)} does not match the type's own regex`);
  if (out.value!.length > out.max!) throw invalid(`${where}: ${out.value!.length} values, more than max (${out.max})`);
  if (!out.editable && out.value!.length < out.min! && !out.computationRule) throw invalid(`${where}: not editable, and fewer values than min (${out.min}) (and no computation rule)`);
  return out;
}

function labelRule(rule: LabelRule, i: number, seen: Set<string>): LabelRule {
  if (seen.has(rule.label)) throw invalid(`labels[${i}]: label ${rule.label} is listed twice`);
  seen.add(rule.label);
  const out: LabelRule = { label: rule.label, value: rule.value ?? null, mandatory: rule.mandatory ?? false, editable: rule.editable ?? true, ...withRule(`labels[${i}] (${rule.label})`, rule.computationRule) };
  if (!out.editable && out.mandatory && !nonEmpty(out.value) && !out.computationRule) throw invalid(`labels[${i}] (${rule.label}): a mandatory label that is not editable needs a value`);
  return out;
}

function singleRule(where: string, rule: SingleValueRule | undefined): SingleValueRule {
  const out: SingleValueRule = { value: rule?.value ?? null, mandatory: rule?.mandatory ?? false, editable: rule?.editable ?? true, ...withRule(where, rule?.computationRule) };
  if (!out.editable && out.mandatory && !nonEmpty(out.value) && !out.computationRule) throw invalid(`${where}: mandatory and not editable, it needs a value`);
  return out;
}

function principalList(where: string, list: string[] | undefined): string[] {
  const out = [...new Set(list ?? [])];
  for (const entry of out) {
    if ((entry.startsWith('role:') || entry.startsWith('team:')) && entry.length === 5) throw invalid(`${where}: "${entry}" names no ${entry.slice(0, 4)}`);
  }
  return out;
}

/**
 * Schema and rules only (no database): the profile with its defaults, or PRF-002. The Horizon form of a
 * part (horizon/index.ts) is mapped onto the profile, whose rules are then checked again; `stored` are the
 * profiles the body may repeat (which of two disagreeing forms was edited): on a PUT the one it replaces,
 * on a POST the tenant's.
 */
export function normalizeProfile(body: unknown, stored: readonly CertificateProfile[] = []): CertificateProfile {
  if (!validateInput(body)) throw invalid(schemaDetail(validateInput.errors?.[0]));
  const sent = body as Record<string, unknown>;
  const profile = rules(certwrightPart(sent) as ProfileInput);
  return hasHorizonKeys(sent) ? rules(mergeHorizon(sent, profile, stored)) : profile;
}

/** The rules a schema cannot say, and the defaults. */
function rules(input: ProfileInput): CertificateProfile {
  const base = defaultProfile(input.name, input.pkiConnector);
  const keyPolicy = { ...base.keyPolicy, ...(input.keyPolicy ?? {}) };
  keyPolicy.authorizedKeyTypes = [...new Set(keyPolicy.authorizedKeyTypes)];
  if (!keyPolicy.authorizedKeyTypes.includes(keyPolicy.defaultKeyType)) {
    throw invalid(`keyPolicy.defaultKeyType ${keyPolicy.defaultKeyType} is not among keyPolicy.authorizedKeyTypes (${keyPolicy.authorizedKeyTypes.join(', ')})`);
  }
  if (!keyPolicy.centralized && !keyPolicy.decentralized) throw invalid('keyPolicy: at least one of centralized and decentralized must be true');
  if (!keyPolicy[keyPolicy.preferredEnrollmentMode]) throw invalid(`keyPolicy.preferredEnrollmentMode ${keyPolicy.preferredEnrollmentMode} is not enabled`);
  if (keyPolicy.escrow && !keyPolicy.centralized) throw invalid('keyPolicy.escrow keeps server-generated keys: it needs centralized enrollment');
  const extendedKeyUsage = [...new Set(input.extendedKeyUsage ?? base.extendedKeyUsage)].map((u) => {
    const known = EKU_NAMES.get(u.toLowerCase());
    if (known) return known;
    if (OID.test(u)) return u;
    throw invalid(`extendedKeyUsage: unknown usage "${u}" (${[...EKU_NAMES.values()].join(', ')}, or an OID)`);
  });
  const subjects = new Set<string>();
  const sanTypes = new Set<string>();
  const labels = new Set<string>();
  const auth = input.authorizations ?? {};
  const workflows: CertificateProfile['authorizations']['workflows'] = {};
  for (const [workflow, rights] of Object.entries(auth.workflows ?? {}) as [Workflow, { direct?: string[]; request?: string[] }][]) {
    workflows[workflow] = {
      ...(rights.direct ? { direct: principalList(`authorizations.workflows.${workflow}.direct`, rights.direct) } : {}),
      ...(rights.request ? { request: principalList(`authorizations.workflows.${workflow}.request`, rights.request) } : {}),
    };
    if (!HOLDER_POP_WORKFLOWS.includes(workflow) && [...(rights.direct ?? []), ...(rights.request ?? [])].includes(HOLDER_POP)) {
      throw invalid(`authorizations.workflows.${workflow}: "${HOLDER_POP}" (the holder proving possession of a certificate's key) applies to renew, revoke and update only`);
    }
  }
  if ((auth.approve ?? []).includes(HOLDER_POP)) throw invalid(`authorizations.approve: "${HOLDER_POP}" cannot approve`);
  const profile: CertificateProfile = {
    name: input.name,
    module: input.module ?? base.module,
    enabled: input.enabled ?? true,
    ...localizedField('description', input.description),
    ...localizedField('displayName', input.displayName),
    pkiConnector: input.pkiConnector,
    keyPolicy,
    validityDays: input.validityDays ?? base.validityDays,
    keyUsage: [...new Set(input.keyUsage ?? base.keyUsage)],
    extendedKeyUsage,
    subject: (input.subject ?? base.subject).map((r, i) => subjectRule(r, i, subjects)),
    sans: (input.sans ?? base.sans).map((r, i) => sanRule(r, i, sanTypes)),
    labels: (input.labels ?? base.labels).map((r, i) => labelRule(r, i, labels)),
    owner: singleRule('owner', input.owner),
    team: singleRule('team', input.team),
    contactEmail: singleRule('contactEmail', input.contactEmail),
    authorizations: { workflows, approve: principalList('authorizations.approve', auth.approve), selfApproval: auth.selfApproval ?? false },
    authorizationMode: input.authorizationMode ?? base.authorizationMode,
    challenge: { ...base.challenge, ...(input.challenge ?? {}) },
    ...(input.protocols ? { protocols: input.protocols } : {}),
  };
  if (profile.authorizationMode === 'challenge' && profile.module !== 'webra') throw invalid('authorizationMode challenge is for webra profiles');
  return profile;
}

/** Whether the tenant has a PKI connector of this name (migration 0014's `pki_connectors`); true while that table does not exist yet. */
export async function connectorExists(knex: Knex, tenant: string, name: string): Promise<boolean> {
  try {
    return (await knex('pki_connectors').where({ tenant, name }).first('name')) !== undefined;
  } catch (err) {
    if (!(await knex.schema.hasTable('pki_connectors'))) return true;
    throw err;
  }
}

/** The whole check: normalizeProfile, then the connector and the password policies the profile names must exist. */
export async function checkProfile(knex: Knex, clock: () => number, tenant: string, body: unknown, stored: readonly CertificateProfile[] = []): Promise<CertificateProfile> {
  const profile = normalizeProfile(body, stored);
  if (!(await connectorExists(knex, tenant, profile.pkiConnector))) throw invalid(`pkiConnector: no PKI connector named "${profile.pkiConnector}" (/api/v1/pki/connectors/)`);
  const policies = new PasswordPolicyService(knex, clock);
  for (const [where, name] of [
    ['keyPolicy.passwordPolicy', profile.keyPolicy.passwordPolicy],
    ['challenge.passwordPolicy', profile.challenge.passwordPolicy],
  ] as const) {
    if (name === undefined) continue;
    try {
      await policies.resolve(tenant, name);
    } catch (err) {
      if (err instanceof ProblemError) throw invalid(`${where}: no password policy named "${name}" (/api/v1/security/passwordpolicies/)`);
      throw err;
    }
  }
  return profile;
}
