/**
 * Certificate profiles as stored and shown: the defaults of every optional field, the closed lists
 * (key types, SAN types, workflows), subject element names, and the row mapping of migration 0015.
 */
import { DN_ATTRIBUTES, DN_ELEMENTS } from '../pki/oids.js';
import type { SubjectAlternateName } from '../pki/x509/model.js';
import type { CertificateProfile, KeyPolicy, KeyTypeName, Workflow } from './types.js';
import { localizedOf } from '../http/localized-text.js';

export const KEY_TYPES: readonly KeyTypeName[] = ['rsa-2048', 'rsa-3072', 'rsa-4096', 'ec-secp256r1', 'ec-secp384r1', 'ec-secp521r1', 'ed-25519'];
export const isKeyType = (value: string): value is KeyTypeName => (KEY_TYPES as readonly string[]).includes(value);

export const SAN_TYPES: readonly SubjectAlternateName['sanType'][] = ['DNSNAME', 'IPADDRESS', 'RFC822NAME', 'URI', 'OTHERNAME_UPN', 'OTHERNAME_GUID', 'OTHERNAME', 'REGISTERED_ID', 'DIRECTORYNAME'];
/** Spellings other clients use for a SAN type (MCP: REGISTEREDID). */
const SAN_ALIASES: Record<string, SubjectAlternateName['sanType']> = { REGISTEREDID: 'REGISTERED_ID', IP: 'IPADDRESS', EMAIL: 'RFC822NAME', DNS: 'DNSNAME', UPN: 'OTHERNAME_UPN' };
/** A SAN type as sent (any case, aliases, a pre-2.4 element `dnsname.1`) → its canonical name, or null. */
export function sanTypeOf(text: string): SubjectAlternateName['sanType'] | null {
  const upper = text.trim().replace(/\.\d+$/, '').toUpperCase();
  if ((SAN_TYPES as readonly string[]).includes(upper)) return upper as SubjectAlternateName['sanType'];
  return SAN_ALIASES[upper] ?? null;
}

export const WORKFLOWS: readonly Workflow[] = ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'];

/** Subject attribute names (lower case: compat elements cn, e, t, … and OpenSSL names) → OID; what core/pki/issue/names.ts encodes. */
const ATTRIBUTE_OIDS = new Map<string, string>();
for (const [oid, name] of Object.entries(DN_ATTRIBUTES)) ATTRIBUTE_OIDS.set(name.toLowerCase(), oid);
for (const [oid, element] of Object.entries(DN_ELEMENTS)) ATTRIBUTE_OIDS.set(element, oid);

/** A subject element: `cn.1` (canonical element name as the DN decoder writes it), type `CN`, attribute `CN` (RFC 4514 / OpenSSL name). */
export interface ElementName {
  /** `cn.1`, `ou.2`, `e.1`, `serialnumber.1`, … */
  element: string;
  /** Upper-case attribute type of the template (`CN`, `OU`, `EMAILADDRESS`), as dnElements carry it. */
  type: string;
  /** The attribute as RFC 4514 writes it (`CN`, `emailAddress`, `serialNumber`). */
  attribute: string;
  index: number;
}

/**
 * Parses `cn.1`, `CN.2`, `serialNumber`, `emailAddress.1`, `e` (no index = 1): null when the attribute is
 * not one the certificate encoder knows, or the index is not a positive integer.
 */
export function elementNameOf(text: string): ElementName | null {
  const match = /^([A-Za-z][A-Za-z0-9]*)(?:\.([1-9][0-9]{0,2}))?$/.exec(text.trim());
  if (!match) return null;
  const oid = ATTRIBUTE_OIDS.get(match[1]!.toLowerCase());
  if (!oid) return null;
  const attribute = DN_ATTRIBUTES[oid]!;
  const index = match[2] ? Number(match[2]) : 1;
  return { element: `${DN_ELEMENTS[oid] ?? attribute}.${index}`, type: attribute.toUpperCase(), attribute, index };
}

/** The element names a profile accepts, for error details. */
export const KNOWN_ELEMENTS: readonly string[] = [...new Set([...Object.values(DN_ELEMENTS), ...Object.values(DN_ATTRIBUTES)])];

export const DEFAULT_KEY_POLICY: KeyPolicy = {
  authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'ed-25519'],
  defaultKeyType: 'ec-secp256r1',
  centralized: true,
  decentralized: true,
  preferredEnrollmentMode: 'decentralized',
  escrow: false,
  p12passwordMode: 'generated',
  showP12OnEnroll: true,
  showP12PasswordOnEnroll: true,
};

export const DEFAULT_SAN_MAX = 10;

/** Every default of a profile but its name and connector (the brief's "agreed API"). */
export function defaultProfile(name: string, pkiConnector: string): CertificateProfile {
  return {
    name,
    module: 'webra',
    enabled: true,
    pkiConnector,
    keyPolicy: { ...DEFAULT_KEY_POLICY, authorizedKeyTypes: [...DEFAULT_KEY_POLICY.authorizedKeyTypes] },
    validityDays: 365,
    keyUsage: ['digitalSignature', 'keyEncipherment'],
    extendedKeyUsage: ['serverAuth', 'clientAuth'],
    subject: [{ element: 'cn.1', value: null, mandatory: true, editable: true, regex: null }],
    sans: [{ type: 'DNSNAME', value: [], editable: true, min: 0, max: DEFAULT_SAN_MAX, regex: null }],
    labels: [],
    owner: { value: null, mandatory: false, editable: true },
    team: { value: null, mandatory: false, editable: true },
    contactEmail: { value: null, mandatory: false, editable: true },
    authorizations: { workflows: {}, approve: [], selfApproval: false },
    authorizationMode: 'standard',
    challenge: { validityMinutes: 10080 },
  };
}

/** A stored profile: the profile and what the table adds. */
export interface StoredProfile {
  id: string;
  tenant: string;
  profile: CertificateProfile;
  version: number;
  createdBy: string | null;
  updatedBy: string | null;
}

/** The API shape: the profile with `_id`, `version` and its dates. */
export type ProfileView = CertificateProfile & { _id: string; version: number; createdAt: number; updatedAt: number };

export const viewOf = (s: StoredProfile): ProfileView => ({
  _id: s.id,
  ...s.profile,
  version: s.version,
  createdAt: s.profile.createdAt ?? 0,
  updatedAt: s.profile.updatedAt ?? 0,
});

export interface ProfileRow {
  id: string;
  tenant: string;
  name: string;
  module: string;
  enabled: number | boolean;
  pki_connector: string;
  document: string;
  version: number | string;
  created_at: number | string;
  updated_at: number | string;
  created_by: string | null;
  updated_by: string | null;
}

export function storedOfRow(r: ProfileRow): StoredProfile {
  const document = JSON.parse(r.document) as Omit<CertificateProfile, 'name' | 'module' | 'enabled' | 'pkiConnector'>;
  // Profiles saved before descriptions were localised hold a string: English.
  if (typeof document.description === 'string') document.description = localizedOf(document.description);
  const base = defaultProfile(r.name, r.pki_connector);
  const profile: CertificateProfile = {
    ...base,
    ...document,
    name: r.name,
    module: r.module,
    enabled: Boolean(r.enabled),
    pkiConnector: r.pki_connector,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
  return { id: r.id, tenant: r.tenant, profile, version: Number(r.version), createdBy: r.created_by, updatedBy: r.updated_by };
}

export function rowOfStored(s: StoredProfile): ProfileRow {
  const { name, module, enabled, pkiConnector, createdAt, updatedAt, ...document } = s.profile;
  return {
    id: s.id,
    tenant: s.tenant,
    name,
    module,
    enabled,
    pki_connector: pkiConnector,
    document: JSON.stringify(document),
    version: s.version,
    created_at: createdAt ?? 0,
    updated_at: updatedAt ?? 0,
    created_by: s.createdBy,
    updated_by: s.updatedBy,
  };
}
