import { createHash } from 'node:crypto';
import { newId } from '../db/ids.js';
import { ProblemError } from '../errors/index.js';
import type { CertificateInfo, SubjectAlternateName } from '../pki/x509/model.js';
import type { CertificateInput, CertificatePatch, DiscoveryData, DiscoveryInfo, KeyValue, ThirdPartyData, TriggerResult } from './types.js';

/**
 * A certificate as the rows of migration 0006: the pure mapping from a decoded certificate and what the
 * caller said about it (CertificateInput) to the main row and its side rows. No database access here:
 * the repository writes what this returns, the benchmark seeds from it.
 */

/** Search keys (SAN value_lc / value_rev, facet values) stop here: MySQL's 3072-byte index keys. */
export const SEARCH_KEY_LENGTH = 512;
/** Column widths of 0006, checked before writing so MySQL never truncates (nor SQLite stores) more. */
export const LIMITS = {
  module: 64,
  profile: 191,
  owner: 191,
  team: 191,
  contactEmail: 320,
  revocationReason: 64,
  holderId: 191,
  grade: 16,
  serial: 128,
  keyType: 64,
  signingAlgorithm: 64,
  labelKey: 191,
  labelValue: 448,
} as const;

/**
 * A certificate's row but `tenant`: the columns of inv_certificates and, since migration 0010, those of
 * inv_certificate_documents (DOCUMENT_COLUMNS), which hold what is large and never searched.
 */
export interface MainRow {
  id: string;
  module: string | null;
  profile: string | null;
  owner: string | null;
  team: string | null;
  contact_email: string | null;
  pem: string;
  thumbprint: string;
  public_key_thumbprint: string;
  self_signed: boolean;
  dn: string;
  dn_key: string;
  serial: string;
  issuer: string;
  issuer_key: string;
  not_before: number;
  not_after: number;
  revoked: boolean;
  revocation_date: number | null;
  revocation_reason: string | null;
  key_type: string;
  signing_algorithm: string;
  holder_id: string | null;
  escrowed: boolean;
  auto_renew: boolean;
  crl_synchronized: boolean;
  archived: boolean;
  discovered: boolean;
  discovered_trusted: boolean | null;
  grade: string | null;
  extensions: string | null;
  grades: string | null;
  third_party_data: string | null;
  trigger_results: string | null;
  discovery_data: string | null;
  discovery_info: string | null;
  requested_x509_data: string | null;
  created_at: number;
  updated_at: number;
}

/** The columns of inv_certificates but `tenant`, in insert order. */
export const MAIN_COLUMNS: readonly (keyof MainRow)[] = [
  'id',
  'module',
  'profile',
  'owner',
  'team',
  'contact_email',
  'thumbprint',
  'public_key_thumbprint',
  'self_signed',
  'dn',
  'dn_key',
  'serial',
  'issuer',
  'issuer_key',
  'not_before',
  'not_after',
  'revoked',
  'revocation_date',
  'revocation_reason',
  'key_type',
  'signing_algorithm',
  'holder_id',
  'escrowed',
  'auto_renew',
  'crl_synchronized',
  'archived',
  'discovered',
  'discovered_trusted',
  'grade',
  'created_at',
  'updated_at',
];

/**
 * Columns kept in inv_certificate_documents (one row per certificate, migration 0010): the PEM and the
 * JSON lists, about 2 KB of the 2.5 KB of a row. Out of the main table, a scan (CSV export, aggregate,
 * unindexed search) reads a fifth of the bytes; a page reads them for its own rows only.
 */
export const DOCUMENT_COLUMNS = [
  'pem',
  'extensions',
  'grades',
  'third_party_data',
  'trigger_results',
  'discovery_data',
  'discovery_info',
  'requested_x509_data',
] as const satisfies readonly (keyof MainRow)[];
const IN_DOCUMENT: ReadonlySet<string> = new Set(DOCUMENT_COLUMNS);
export const isDocumentColumn = (column: string): boolean => IN_DOCUMENT.has(column);


/** One row of inv_certificate_sans (certificate_id and tenant are added when written). */
export interface SanRow {
  san_type: string;
  value: string;
  value_lc: string;
  value_rev: string;
  position: number;
}
export const SAN_COLUMNS: readonly (keyof SanRow)[] = ['san_type', 'value', 'value_lc', 'value_rev', 'position'];

/** One row of inv_certificate_facets: a searchable value of a JSON list (language.ts names them). */
export interface FacetRow {
  facet: string;
  value: string;
}

/** Everything written for one certificate. */
export interface CertificateRecord {
  id: string;
  main: MainRow;
  sans: SanRow[];
  labels: KeyValue[];
  metadata: KeyValue[];
  facets: FacetRow[];
}

/** A record ready for CertificateRepository.insertMany (the seeding path): mapped once, written in batches. */
export type PreparedCertificate = CertificateRecord;

/** Cuts to `n` UTF-16 units without splitting a surrogate pair. */
export function cut(text: string, n: number): string {
  if (text.length <= n) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** The string reversed by code point (suffix searches become prefix ranges on the reversed key). */
export const reversed = (text: string): string => (/[\ud800-\udfff]/.test(text) ? Array.from(text).reverse().join('') : text.split('').reverse().join(''));

/** The indexed keys of a SAN value: lower-cased, and lower-cased reversed, both cut to 512. */
export function sanKeys(value: string): { lc: string; rev: string } {
  const lc = value.toLowerCase();
  return { lc: cut(lc, SEARCH_KEY_LENGTH), rev: cut(reversed(lc), SEARCH_KEY_LENGTH) };
}

/** sha256 hex of the exact DN string: the indexed equality key of dn / issuer. */
export const dnKey = (dn: string): string => createHash('sha256').update(dn).digest('hex');

export function sanRows(sans: readonly SubjectAlternateName[]): SanRow[] {
  return sans.map((s, position) => {
    const { lc, rev } = sanKeys(s.value);
    return { san_type: s.sanType, value: s.value, value_lc: lc, value_rev: rev, position };
  });
}

const invalid = (detail: string): ProblemError => new ProblemError('CRT-002', { detail });

/** An optional text field: null, undefined and "" mean none; anything else must be a string within `max`. */
function text(value: unknown, max: number, name: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string') throw invalid(`${name} must be a string`);
  if (value.length > max) throw invalid(`${name} is longer than ${max} characters`);
  return value;
}

function flag(value: unknown, name: string, fallback: boolean): boolean {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(`${name} must be a boolean`);
  return value;
}

function date(value: unknown, name: string): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalid(`${name} must be an epoch-ms integer`);
  return value;
}

function list<T>(value: unknown, name: string): T[] | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value)) throw invalid(`${name} must be an array`);
  for (const item of value) if (item === null || typeof item !== 'object' || Array.isArray(item)) throw invalid(`${name} must hold objects`);
  return value as T[];
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

const scalarText = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;

/**
 * Labels as given: every key once, strings within the column widths. Whether the key is a defined label
 * and the value matches its regex is the label store's check (it needs the definitions).
 */
export function labelsOf(value: unknown): KeyValue[] {
  const given = list<{ key?: unknown; value?: unknown }>(value, 'labels') ?? [];
  const seen = new Set<string>();
  return given.map((l) => {
    const key = typeof l.key === 'string' ? l.key : '';
    const v = scalarText(l.value);
    if (key === '' || v === null) throw new ProblemError('LBL-006', { message: `Label element ${key || '(no key)'} is not authorized: a label needs a key and a string value` });
    if (key.length > LIMITS.labelKey) throw new ProblemError('LBL-006', { message: `Label element ${key.slice(0, 64)}… is not authorized: the key is longer than ${LIMITS.labelKey} characters` });
    if (v.length > LIMITS.labelValue) throw new ProblemError('LBL-006', { message: `Label element ${key} is not authorized: its value is longer than ${LIMITS.labelValue} characters` });
    if (seen.has(key)) throw new ProblemError('LBL-006', { message: `Label element ${key} is not authorized: the key is given more than once` });
    seen.add(key);
    return { key, value: v };
  });
}

/** Metadata as given: every key once, strings (numbers and booleans tolerated as text) within the column widths. */
export function metadataOf(value: unknown): KeyValue[] {
  const given = list<{ key?: unknown; value?: unknown }>(value, 'metadata') ?? [];
  const seen = new Set<string>();
  return given.map((m) => {
    const key = typeof m.key === 'string' ? m.key : '';
    const v = scalarText(m.value);
    if (key === '' || v === null) throw invalid('metadata entries need a key and a string value');
    if (key.length > LIMITS.labelKey) throw invalid(`metadata key ${key.slice(0, 64)}… is longer than ${LIMITS.labelKey} characters`);
    if (v.length > LIMITS.labelValue) throw invalid(`metadata ${key}: the value is longer than ${LIMITS.labelValue} characters`);
    if (seen.has(key)) throw invalid(`metadata ${key} is given more than once`);
    seen.add(key);
    return { key, value: v };
  });
}

/** The facets each JSON list feeds (names as language.ts queries them). */
export const FACET_GROUPS = {
  discoveryData: ['discovery.ip', 'discovery.hostname', 'discovery.os', 'discovery.path', 'discovery.usage', 'discovery.source', 'discovery.tlsport'],
  discoveryInfo: ['discovery.campaign'],
  thirdPartyData: ['thirdparty.connector', 'thirdparty.id'],
  triggerResults: ['trigger.name', 'trigger.status'],
} as const;
export type FacetGroup = keyof typeof FACET_GROUPS;

/** The facet rows of one JSON list, each (facet, value) once; values cut to the search key length. */
export function facetRows(group: FacetGroup, items: readonly unknown[] | null): FacetRow[] {
  if (!items || items.length === 0) return [];
  const out: FacetRow[] = [];
  const seen = new Set<string>();
  const add = (facet: string, value: unknown): void => {
    const v = scalarText(value);
    if (v === null || v === '') return;
    const c = cut(v, SEARCH_KEY_LENGTH);
    const k = `${facet}\u0000${c}`;
    if (seen.has(k)) return;
    seen.add(k);
    out.push({ facet, value: c });
  };
  const each = (values: unknown, facet: string): void => {
    if (Array.isArray(values)) for (const v of values) add(facet, v);
  };
  for (const item of items as Record<string, unknown>[]) {
    switch (group) {
      case 'discoveryData': {
        const d = item as Partial<Record<keyof DiscoveryData, unknown>>;
        add('discovery.ip', d.ip);
        each(d.hostnames, 'discovery.hostname');
        each(d.operatingSystems, 'discovery.os');
        each(d.paths, 'discovery.path');
        each(d.usages, 'discovery.usage');
        each(d.sources, 'discovery.source');
        if (Array.isArray(d.tlsPorts)) for (const p of d.tlsPorts as { port?: unknown }[]) add('discovery.tlsport', p?.port);
        break;
      }
      case 'discoveryInfo':
        add('discovery.campaign', (item as Partial<DiscoveryInfo>).campaign);
        break;
      case 'thirdPartyData':
        add('thirdparty.connector', (item as Partial<ThirdPartyData>).connector);
        add('thirdparty.id', (item as Partial<ThirdPartyData>).id);
        break;
      case 'triggerResults':
        add('trigger.name', (item as Partial<TriggerResult>).name);
        add('trigger.status', (item as Partial<TriggerResult>).status);
        break;
    }
  }
  return out;
}

/** Module of a certificate that does not name one: `webra` when it has a profile, else `discovery`. */
export const defaultModule = (profile: string | null): string => (profile ? 'webra' : 'discovery');

/**
 * The rows of one certificate. `info` is the decoded certificate (parseCertificate), `input` what the
 * caller says about it; `id` and `now` make it pure. Throws CRT-002 / LBL-006 for input that cannot be
 * stored (too long, wrong type, repeated keys).
 */
export function recordOf(info: CertificateInfo, input: CertificateInput, options: { id: string; now: number }): CertificateRecord {
  const profile = text(input.profile, LIMITS.profile, 'profile');
  const discoveryData = list<DiscoveryData>(input.discoveryData, 'discoveryData');
  const discoveryInfo = list<DiscoveryInfo>(input.discoveryInfo, 'discoveryInfo');
  const thirdPartyData = list<ThirdPartyData>(input.thirdPartyData, 'thirdPartyData');
  const triggerResults = list<TriggerResult>(input.triggerResults, 'triggerResults');
  if (info.serial.length > LIMITS.serial) throw invalid(`the serial number is longer than ${LIMITS.serial} hexadecimal digits`);
  if (info.keyType.length > LIMITS.keyType) throw invalid('the key type is not supported');
  if (info.signingAlgorithm.length > LIMITS.signingAlgorithm) throw invalid('the signature algorithm is not supported');
  if (input.grades !== undefined && input.grades !== null && !Array.isArray(input.grades)) throw invalid('grades must be an array');
  const main: MainRow = {
    id: options.id,
    module: text(input.module, LIMITS.module, 'module') ?? defaultModule(profile),
    profile,
    owner: text(input.owner, LIMITS.owner, 'owner'),
    team: text(input.team, LIMITS.team, 'team'),
    contact_email: text(input.contactEmail, LIMITS.contactEmail, 'contactEmail'),
    pem: info.pem,
    thumbprint: info.thumbprint,
    public_key_thumbprint: info.publicKeyThumbprint,
    self_signed: info.selfSigned,
    dn: info.dn,
    dn_key: dnKey(info.dn),
    serial: info.serial,
    issuer: info.issuer,
    issuer_key: dnKey(info.issuer),
    not_before: info.notBefore,
    not_after: info.notAfter,
    revoked: flag(input.revoked, 'revoked', false),
    revocation_date: date(input.revocationDate, 'revocationDate'),
    revocation_reason: text(input.revocationReason, LIMITS.revocationReason, 'revocationReason'),
    key_type: info.keyType,
    signing_algorithm: info.signingAlgorithm,
    holder_id: text(input.holderId, LIMITS.holderId, 'holderId'),
    escrowed: flag(input.escrowed, 'escrowed', false),
    auto_renew: flag(input.autoRenew, 'autoRenew', false),
    crl_synchronized: flag(input.crlSynchronized, 'crlSynchronized', false),
    archived: flag(input.archived, 'archived', false),
    discovered: (discoveryInfo?.length ?? 0) > 0,
    discovered_trusted: input.discoveredTrusted === undefined || input.discoveredTrusted === null ? null : flag(input.discoveredTrusted, 'discoveredTrusted', false),
    grade: text(input.grade, LIMITS.grade, 'grade'),
    extensions: JSON.stringify(info.extensions),
    grades: json(input.grades),
    third_party_data: json(thirdPartyData),
    trigger_results: json(triggerResults),
    discovery_data: json(discoveryData),
    discovery_info: json(discoveryInfo),
    requested_x509_data: json(input.requestedX509Data),
    created_at: options.now,
    updated_at: options.now,
  };
  return {
    id: options.id,
    main,
    sans: sanRows(info.subjectAlternateNames),
    labels: labelsOf(input.labels),
    metadata: metadataOf(input.metadata),
    facets: [
      ...facetRows('discoveryData', discoveryData),
      ...facetRows('discoveryInfo', discoveryInfo),
      ...facetRows('thirdPartyData', thirdPartyData),
      ...facetRows('triggerResults', triggerResults),
    ],
  };
}

/** recordOf with a fresh id: what insertMany takes. */
export function prepare(info: CertificateInfo, input: CertificateInput, now: number = Date.now()): PreparedCertificate {
  return recordOf(info, input, { id: newId(now), now });
}

/** What a patch changes: main-table columns, and the side rows to rewrite (absent = untouched). */
export interface PatchRecord {
  columns: Partial<MainRow>;
  labels?: KeyValue[];
  metadata?: KeyValue[];
  /** Facet groups to rewrite: their old rows are deleted, these written. */
  facets: { group: FacetGroup; rows: FacetRow[] }[];
}

/** The columns and side rows a CertificatePatch changes (see CertificatePatch: absent = unchanged, null = cleared). */
export function patchOf(patch: CertificatePatch, now: number): PatchRecord {
  const c: Partial<MainRow> = { updated_at: now };
  const has = (k: keyof CertificatePatch): boolean => Object.prototype.hasOwnProperty.call(patch, k) && patch[k] !== undefined;
  if (has('module')) c.module = text(patch.module, LIMITS.module, 'module');
  if (has('profile')) c.profile = text(patch.profile, LIMITS.profile, 'profile');
  if (has('owner')) c.owner = text(patch.owner, LIMITS.owner, 'owner');
  if (has('team')) c.team = text(patch.team, LIMITS.team, 'team');
  if (has('contactEmail')) c.contact_email = text(patch.contactEmail, LIMITS.contactEmail, 'contactEmail');
  if (has('holderId')) c.holder_id = text(patch.holderId, LIMITS.holderId, 'holderId');
  if (has('escrowed')) c.escrowed = flag(patch.escrowed, 'escrowed', false);
  if (has('autoRenew')) c.auto_renew = flag(patch.autoRenew, 'autoRenew', false);
  if (has('crlSynchronized')) c.crl_synchronized = flag(patch.crlSynchronized, 'crlSynchronized', false);
  if (has('archived')) c.archived = flag(patch.archived, 'archived', false);
  if (has('revoked')) c.revoked = flag(patch.revoked, 'revoked', false);
  if (has('revocationDate')) c.revocation_date = date(patch.revocationDate, 'revocationDate');
  if (has('revocationReason')) c.revocation_reason = text(patch.revocationReason, LIMITS.revocationReason, 'revocationReason');
  if (has('grade')) c.grade = text(patch.grade, LIMITS.grade, 'grade');
  if (has('grades')) {
    if (patch.grades !== null && !Array.isArray(patch.grades)) throw invalid('grades must be an array');
    c.grades = json(patch.grades);
  }
  if (has('discoveredTrusted')) c.discovered_trusted = patch.discoveredTrusted === null ? null : flag(patch.discoveredTrusted, 'discoveredTrusted', false);
  if (has('requestedX509Data')) c.requested_x509_data = json(patch.requestedX509Data);
  const facets: PatchRecord['facets'] = [];
  const lists: [FacetGroup, keyof MainRow][] = [
    ['discoveryData', 'discovery_data'],
    ['discoveryInfo', 'discovery_info'],
    ['thirdPartyData', 'third_party_data'],
    ['triggerResults', 'trigger_results'],
  ];
  for (const [group, column] of lists) {
    if (!has(group)) continue;
    const items = list<unknown>(patch[group], group);
    (c as Record<string, unknown>)[column] = json(items);
    if (group === 'discoveryInfo') c.discovered = (items?.length ?? 0) > 0;
    facets.push({ group, rows: facetRows(group, items) });
  }
  const out: PatchRecord = { columns: c, facets };
  if (has('labels')) out.labels = labelsOf(patch.labels);
  if (has('metadata')) out.metadata = metadataOf(patch.metadata);
  return out;
}
