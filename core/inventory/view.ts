import { extensionList } from '../pki/views/extension-list.js';
import type { DecodedExtensions, SubjectAlternateName } from '../pki/x509/model.js';
import { DOCUMENT_COLUMNS, isDocumentColumn, MAIN_COLUMNS, type MainRow } from './record.js';
import type { CertificateObject, KeyValue } from './types.js';

/**
 * Rows of inv_certificates (+ side rows) → the certificate object of client-compat §3: epoch-ms numbers
 * (MySQL's BIGINT arrives as a number or, beyond 2^53, a string), booleans (SQLite answers 0/1), arrays
 * never null for subjectAlternateNames / labels / metadata, absent keys for optional scalars without a
 * value (discoveredTrusted alone may be null), JSON columns parsed.
 */

/** A main-table row as selected: `select inv_certificates.*` or the columns COLUMNS_FOR names. */
export type CertificateRow = { id: string; tenant?: unknown } & { [K in Exclude<keyof MainRow, 'id'>]?: unknown };

/** Side rows of one certificate, as objectsOf loads them (absent = not loaded, answered as []). */
export interface CertificateSides {
  sans?: SubjectAlternateName[];
  labels?: KeyValue[];
  metadata?: KeyValue[];
}

export type CertificateStatus = 'valid' | 'expired' | 'revoked';

const num = (v: unknown): number | undefined =>
  v === null || v === undefined ? undefined : typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : Number(v as string);
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 1n;
const str = (v: unknown): string | undefined => (v === null || v === undefined || v === '' ? undefined : typeof v === 'string' ? v : String(v));
/** The stored decoded extensions as Horizon's [{key, value}] list (absent when nothing is stored). */
function extensionsOf(decoded: unknown): { key: string; value: string }[] | undefined {
  if (typeof decoded !== 'object' || decoded === null || !Array.isArray((decoded as DecodedExtensions).all)) return undefined;
  return extensionList(decoded as DecodedExtensions);
}

function parsed(v: unknown): unknown {
  if (v === null || v === undefined || v === '') return undefined;
  if (typeof v !== 'string') return Buffer.isBuffer(v) ? parsed(v.toString('utf8')) : v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** Derived status (as HCQL's `status is …`): revoked, else expired once notAfter is reached, else valid. */
export const statusOf = (revoked: unknown, notAfter: unknown, now: number): CertificateStatus =>
  bool(revoked) ? 'revoked' : (num(notAfter) ?? 0) <= now ? 'expired' : 'valid';

export type Builder = (row: CertificateRow, sides: CertificateSides, now: number) => unknown;

/** Every property of the object, in the order of client-compat §3: the main-table columns it needs and how it is built. */
const PROPERTIES: readonly (readonly [keyof CertificateObject, readonly (keyof MainRow)[], Builder])[] = [
  ['_id', ['id'], (r) => r.id],
  ['module', ['module'], (r) => str(r.module)],
  ['profile', ['profile'], (r) => str(r.profile)],
  ['owner', ['owner'], (r) => str(r.owner)],
  ['team', ['team'], (r) => str(r.team)],
  ['contactEmail', ['contact_email'], (r) => str(r.contact_email)],
  ['certificate', ['pem'], (r) => str(r.pem)],
  ['thumbprint', ['thumbprint'], (r) => str(r.thumbprint)],
  ['publicKeyThumbprint', ['public_key_thumbprint'], (r) => str(r.public_key_thumbprint)],
  ['selfSigned', ['self_signed'], (r) => ('self_signed' in r ? bool(r.self_signed) : undefined)],
  ['dn', ['dn'], (r) => (typeof r.dn === 'string' ? r.dn : undefined)],
  ['serial', ['serial'], (r) => str(r.serial)],
  ['issuer', ['issuer'], (r) => (typeof r.issuer === 'string' ? r.issuer : undefined)],
  ['notBefore', ['not_before'], (r) => num(r.not_before)],
  ['notAfter', ['not_after'], (r) => num(r.not_after)],
  ['revoked', ['revoked'], (r) => ('revoked' in r ? bool(r.revoked) : undefined)],
  ['revocationDate', ['revocation_date'], (r) => num(r.revocation_date)],
  ['revocationReason', ['revocation_reason'], (r) => str(r.revocation_reason)],
  ['keyType', ['key_type'], (r) => str(r.key_type)],
  ['signingAlgorithm', ['signing_algorithm'], (r) => str(r.signing_algorithm)],
  ['subjectAlternateNames', [], (_r, s) => s.sans ?? []],
  ['labels', [], (_r, s) => s.labels ?? []],
  ['metadata', [], (_r, s) => s.metadata ?? []],
  ['holderId', ['holder_id'], (r) => str(r.holder_id)],
  ['escrowed', ['escrowed'], (r) => ('escrowed' in r ? bool(r.escrowed) : undefined)],
  ['autoRenew', ['auto_renew'], (r) => ('auto_renew' in r ? bool(r.auto_renew) : undefined)],
  ['crlSynchronized', ['crl_synchronized'], (r) => ('crl_synchronized' in r ? bool(r.crl_synchronized) : undefined)],
  // Horizon's list of {key, value} text (the v2 Go client decodes an array); Certwright's decoding beside it.
  ['extensions', ['extensions'], (r) => extensionsOf(parsed(r.extensions))],
  ['decodedExtensions', ['extensions'], (r) => parsed(r.extensions)],
  ['grades', ['grades'], (r) => parsed(r.grades)],
  ['grade', ['grade'], (r) => str(r.grade)],
  ['thirdPartyData', ['third_party_data'], (r) => parsed(r.third_party_data)],
  ['triggerResults', ['trigger_results'], (r) => parsed(r.trigger_results)],
  ['discoveryData', ['discovery_data'], (r) => parsed(r.discovery_data)],
  ['discoveryInfo', ['discovery_info'], (r) => parsed(r.discovery_info)],
  ['discoveredTrusted', ['discovered_trusted'], (r) => (!('discovered_trusted' in r) ? undefined : r.discovered_trusted === null ? null : bool(r.discovered_trusted))],
  ['requestedX509Data', ['requested_x509_data'], (r) => parsed(r.requested_x509_data)],
  ['status', ['revoked', 'not_after'], (r, _s, now) => ('revoked' in r && 'not_after' in r ? statusOf(r.revoked, r.not_after, now) : undefined)],
];

/** How each property is built from a row (side properties from CertificateSides). */
export const PROPERTY_BUILDERS: ReadonlyMap<string, Builder> = new Map(PROPERTIES.map(([p, , b]) => [p, b]));

/** The properties of a certificate object, in answer order. */
export const CERTIFICATE_PROPERTIES: readonly string[] = PROPERTIES.map(([p]) => p);
/** Properties loaded from side tables (one query per table for a whole page). */
export const SIDE_PROPERTIES = { subjectAlternateNames: 'inv_certificate_sans', labels: 'inv_certificate_labels', metadata: 'inv_certificate_metadata' } as const;

/** The columns (of both tables) a projection needs; null = every one. */
function neededColumns(fields: ReadonlySet<string> | Iterable<string> | null): Set<string> {
  if (fields === null) return new Set([...MAIN_COLUMNS, ...DOCUMENT_COLUMNS]);
  const wanted = fields instanceof Set ? (fields as ReadonlySet<string>) : new Set(fields);
  const out = new Set<string>(['id']);
  for (const [property, columns] of PROPERTIES) if (wanted.has(property)) for (const c of columns) out.add(c);
  return out;
}

/**
 * The inv_certificates columns a projection needs (always `id`): `fields` are property names of the
 * object (`notAfter`, `labels`…); null = the whole object. The PEM and the JSON lists are not among
 * them: they live in inv_certificate_documents (DOCUMENT_COLUMNS_FOR), which objectsOf reads for a page.
 * Unknown names need nothing.
 */
export function COLUMNS_FOR(fields: ReadonlySet<string> | Iterable<string> | null): string[] {
  return [...neededColumns(fields)].filter((c) => !isDocumentColumn(c));
}

/** The inv_certificate_documents columns a projection needs (`pem` only when `certificate` is asked for). */
export function DOCUMENT_COLUMNS_FOR(fields: ReadonlySet<string> | Iterable<string> | null): string[] {
  return [...neededColumns(fields)].filter(isDocumentColumn);
}

/** COLUMNS_FOR under a camelCase name. */
export const columnsFor = COLUMNS_FOR;

/** The builders of a projection (null = every property), computed once per page. */
export function buildersFor(fields: ReadonlySet<string> | null): readonly (readonly [string, Builder])[] {
  return PROPERTIES.filter(([p]) => fields === null || p === '_id' || fields.has(p)).map(([p, , b]) => [p, b] as const);
}

/**
 * One certificate object from its row and side rows. With `fields`, only those properties (plus `_id`)
 * are set; `status` is computed from `now`.
 */
export function objectOf(row: CertificateRow, sides: CertificateSides, fields: ReadonlySet<string> | null, now: number, builders = buildersFor(fields)): CertificateObject {
  const out: Record<string, unknown> = {};
  for (const [property, build] of builders) {
    const v = build(row, sides, now);
    if (v !== undefined) out[property] = v;
  }
  return out as unknown as CertificateObject;
}

const localized = { type: 'array', items: {} } as const;
const keyValues = { type: 'array', items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } } } as const;

/** JSON schema of the certificate object (responses, OpenAPI). Lists with free-form entries are left open. */
export const certificateObjectSchema = {
  type: 'object',
  required: ['_id'],
  properties: {
    _id: { type: 'string', description: 'Certificate identifier (24 hex characters)' },
    module: { type: 'string' },
    profile: { type: 'string' },
    owner: { type: 'string' },
    team: { type: 'string' },
    contactEmail: { type: 'string' },
    certificate: { type: 'string', description: 'PEM' },
    thumbprint: { type: 'string', description: 'SHA-1 of the DER, hexadecimal' },
    publicKeyThumbprint: { type: 'string', description: 'SHA-256 of the public key, hexadecimal' },
    selfSigned: { type: 'boolean' },
    dn: { type: 'string' },
    serial: { type: 'string', description: 'Hexadecimal' },
    issuer: { type: 'string' },
    notBefore: { type: 'integer', description: 'Epoch ms' },
    notAfter: { type: 'integer', description: 'Epoch ms' },
    revoked: { type: 'boolean' },
    revocationDate: { type: 'integer', description: 'Epoch ms' },
    revocationReason: { type: 'string' },
    keyType: { type: 'string' },
    signingAlgorithm: { type: 'string' },
    subjectAlternateNames: {
      type: 'array',
      items: { type: 'object', required: ['sanType', 'value'], properties: { sanType: { type: 'string' }, value: { type: 'string' } } },
    },
    labels: keyValues,
    metadata: keyValues,
    holderId: { type: 'string' },
    escrowed: { type: 'boolean' },
    autoRenew: { type: 'boolean' },
    crlSynchronized: { type: 'boolean' },
    extensions: {
      type: 'array',
      description: "Horizon's extension list: {key, value} text, key an extension name (keyUsage, basicConstraints, …) or the OID of one not decoded (value: hex)",
      items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } },
    },
    decodedExtensions: { type: 'object', additionalProperties: true, description: 'Every extension as Certwright decodes it (as the x509 decoder answers)' },
    grades: localized,
    grade: { type: 'string' },
    thirdPartyData: localized,
    triggerResults: localized,
    discoveryData: localized,
    discoveryInfo: localized,
    discoveredTrusted: { type: ['boolean', 'null'] },
    requestedX509Data: {},
    status: { type: 'string', enum: ['valid', 'expired', 'revoked'] },
  },
} as const;
