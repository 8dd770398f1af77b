import type { DnElement } from '../names.js';
import type { CertificateInfo, DecodedExtensions, SubjectAlternateName } from '../x509/model.js';
import { dnElementSchema, extensionsSchema, sanSchema } from '../x509/schema.js';

/**
 * A decoded certificate as Horizon's clients read it (CFCertificateResponse: the v2 Go model
 * horizon-go docs/CFCertificateResponse.md, the MCP server's decode_x509 tool description
 * src/tools/assist/crypto.ts): issuerDn, sans, certificateThumbprint (SHA-256),
 * certificateSHAOneThumbprint, key usages flattened with their criticality, basicConstraints {isCa,
 * pathLen}, crldps, aias {crt, ocsp}, policies [{oid, urls}], unsupportedExtensions [{oid, hex}].
 * Certwright adds what those names lose: the version, the issuer's elements and every extension as the
 * toolkit decoded it (`decodedExtensions`: name constraints, SCT count, AKI issuer/serial, criticality).
 */
export interface CertificateView {
  pem: string;
  version: number;
  dn: string;
  dnElements: DnElement[];
  issuerDn: string;
  issuerElements: DnElement[];
  serial: string;
  notBefore: number;
  notAfter: number;
  selfSigned: boolean;
  keyType: string;
  signingAlgorithm: string;
  sans: SubjectAlternateName[];
  certificateThumbprint: string;
  certificateSHAOneThumbprint: string;
  publicKeyThumbprint: string;
  subjectKeyIdentifier: string;
  authorityKeyIdentifier?: string;
  keyUsages: string[];
  isKeyUsagesCritical: boolean;
  extendedKeyUsages: string[];
  isExtendedKeyUsagesCritical: boolean;
  basicConstraints: { isCa: boolean; pathLen?: number };
  crldps?: string[];
  aias?: { crt: string[]; ocsp: string[] };
  policies?: { oid: string; urls?: string[] }[];
  unsupportedExtensions?: { oid: string; hex: string }[];
  decodedExtensions: DecodedExtensions;
}

/** Extensions the toolkit does not interpret, with their bytes (none: the key is left out). */
export function unsupportedExtensions(ext: DecodedExtensions): { oid: string; hex: string }[] | undefined {
  const list = ext.all.flatMap((e) => (e.hex === undefined ? [] : [{ oid: e.oid, hex: e.hex }]));
  return list.length ? list : undefined;
}

export function certificateView(c: CertificateInfo): CertificateView {
  const ext = c.extensions;
  const out: CertificateView = {
    pem: c.pem,
    version: c.version,
    dn: c.dn,
    dnElements: c.dnElements,
    issuerDn: c.issuer,
    issuerElements: c.issuerElements,
    serial: c.serial,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    selfSigned: c.selfSigned,
    keyType: c.keyType,
    signingAlgorithm: c.signingAlgorithm,
    sans: c.subjectAlternateNames,
    certificateThumbprint: c.thumbprints.sha256,
    certificateSHAOneThumbprint: c.thumbprints.sha1,
    publicKeyThumbprint: c.publicKeyThumbprint,
    subjectKeyIdentifier: ext.subjectKeyIdentifier ?? '',
    keyUsages: ext.keyUsage?.usages ?? [],
    isKeyUsagesCritical: ext.keyUsage?.critical ?? false,
    extendedKeyUsages: ext.extendedKeyUsage?.usages ?? [],
    isExtendedKeyUsagesCritical: ext.extendedKeyUsage?.critical ?? false,
    basicConstraints: { isCa: ext.basicConstraints?.ca ?? false },
    decodedExtensions: ext,
  };
  if (ext.basicConstraints?.pathLength !== undefined) out.basicConstraints.pathLen = ext.basicConstraints.pathLength;
  if (ext.authorityKeyIdentifier?.keyIdentifier) out.authorityKeyIdentifier = ext.authorityKeyIdentifier.keyIdentifier;
  if (ext.crlDistributionPoints?.length) out.crldps = ext.crlDistributionPoints;
  if (ext.authorityInfoAccess) out.aias = { crt: ext.authorityInfoAccess.caIssuers, ocsp: ext.authorityInfoAccess.ocsp };
  if (ext.certificatePolicies?.length) out.policies = ext.certificatePolicies.map((p) => (p.cps ? { oid: p.oid, urls: p.cps } : { oid: p.oid }));
  const unsupported = unsupportedExtensions(ext);
  if (unsupported) out.unsupportedExtensions = unsupported;
  return out;
}

const str = { type: 'string' } as const;
const strings = { type: 'array', items: str } as const;
const bool = { type: 'boolean' } as const;
export const unsupportedExtensionsSchema = {
  type: 'array',
  description: 'Extensions the decoder does not interpret: OID and the extnValue octets in hex',
  items: { type: 'object', required: ['oid', 'hex'], properties: { oid: str, hex: str } },
} as const;

/** JSON schema of CertificateView (the x509 decoder's answer and each entry of a trust chain). */
export const certificateViewSchema = {
  type: 'object',
  required: [
    'pem', 'dn', 'dnElements', 'issuerDn', 'serial', 'notBefore', 'notAfter', 'selfSigned', 'keyType', 'signingAlgorithm', 'sans',
    'certificateThumbprint', 'certificateSHAOneThumbprint', 'publicKeyThumbprint', 'subjectKeyIdentifier', 'keyUsages', 'isKeyUsagesCritical',
    'extendedKeyUsages', 'isExtendedKeyUsagesCritical', 'basicConstraints',
  ],
  properties: {
    pem: str,
    version: { type: 'integer', description: 'X.509 version (3 for v3)' },
    dn: { type: 'string', description: 'Subject, RFC 4514' },
    dnElements: { type: 'array', items: dnElementSchema },
    issuerDn: { type: 'string', description: 'Issuer, RFC 4514' },
    issuerElements: { type: 'array', items: dnElementSchema },
    serial: { type: 'string', description: 'lower-case hex' },
    notBefore: { type: 'integer', description: 'epoch ms' },
    notAfter: { type: 'integer', description: 'epoch ms' },
    selfSigned: bool,
    keyType: { type: 'string', description: 'rsa-2048, ec-secp256r1, ed-25519, …' },
    signingAlgorithm: str,
    sans: { type: 'array', items: sanSchema },
    certificateThumbprint: { type: 'string', description: 'SHA-256 of the DER, lower-case hex' },
    certificateSHAOneThumbprint: { type: 'string', description: 'SHA-1 of the DER, lower-case hex (the inventory thumbprint)' },
    publicKeyThumbprint: { type: 'string', description: 'SHA-256 of the SubjectPublicKeyInfo DER, lower-case hex' },
    subjectKeyIdentifier: { type: 'string', description: 'hex; empty without the extension' },
    authorityKeyIdentifier: { type: 'string', description: 'hex key identifier' },
    keyUsages: strings,
    isKeyUsagesCritical: bool,
    extendedKeyUsages: strings,
    isExtendedKeyUsagesCritical: bool,
    basicConstraints: { type: 'object', required: ['isCa'], properties: { isCa: bool, pathLen: { type: 'integer' } } },
    crldps: strings,
    aias: { type: 'object', properties: { crt: strings, ocsp: strings } },
    policies: { type: 'array', items: { type: 'object', required: ['oid'], properties: { oid: str, urls: strings } } },
    unsupportedExtensions: unsupportedExtensionsSchema,
    decodedExtensions: { ...extensionsSchema, description: 'Every extension as Certwright decodes it' },
  },
} as const;
