/**
 * X.509 v3 extensions (RFC 5280 §4.2) decoded as a CLM user reads them. Certificates and CSRs
 * (extensionRequest) share this. A malformed extension does not make the whole object unreadable —
 * inventories must still ingest a certificate with one odd extension — it is flagged `malformed` in
 * `all` and left out of the decoded keys.
 */
import { children, DerError, expectTag, hex, readBitString, readBoolean, readOid, readSmallInt, readString, readTlv, readUnsignedHex, TAG, value, type Tlv } from '../der/reader.js';
import { ACCESS_METHODS, EXTENDED_KEY_USAGES, EXTENSIONS } from '../oids.js';
import { readGeneralName, readGeneralNames, readGeneralNamesDer } from './general-names.js';
import type { DecodedExtensions, SubjectAlternateName } from './model.js';

/** KeyUsage bits in order (RFC 5280 §4.2.1.3). */
export const KEY_USAGES = [
  'digitalSignature',
  'nonRepudiation',
  'keyEncipherment',
  'dataEncipherment',
  'keyAgreement',
  'keyCertSign',
  'cRLSign',
  'encipherOnly',
  'decipherOnly',
] as const;
export type KeyUsage = (typeof KEY_USAGES)[number];

const CPS = '1.3.6.1.5.5.7.2.1';

/** The single TLV an extension's OCTET STRING holds. */
function top(der: Uint8Array, tag: number, what: string): Tlv {
  const tlv = readTlv(der, 0);
  if (tlv.end !== der.length) throw new DerError(`bytes after the ${what}`, tlv.end);
  return expectTag(tlv, tag, what);
}

function keyUsage(der: Uint8Array): string[] {
  const { unused, bytes } = readBitString(der, top(der, TAG.BIT_STRING, 'key usage'));
  const usages: string[] = [];
  const bits = bytes.length * 8 - unused;
  for (let i = 0; i < bits && i < KEY_USAGES.length; i++) if (bytes[i >> 3]! & (0x80 >> (i & 7))) usages.push(KEY_USAGES[i]!);
  return usages;
}

function extendedKeyUsage(der: Uint8Array): string[] {
  return children(der, top(der, TAG.SEQUENCE, 'extended key usage')).map((t) => {
    const oid = readOid(der, t);
    return EXTENDED_KEY_USAGES[oid] ?? oid;
  });
}

function basicConstraints(der: Uint8Array): { ca: boolean; pathLength?: number } {
  const out: { ca: boolean; pathLength?: number } = { ca: false };
  for (const t of children(der, top(der, TAG.SEQUENCE, 'basic constraints'))) {
    if (t.tag === TAG.BOOLEAN) out.ca = readBoolean(der, t);
    else out.pathLength = readSmallInt(der, t);
  }
  return out;
}

function authorityKeyIdentifier(der: Uint8Array): NonNullable<DecodedExtensions['authorityKeyIdentifier']> {
  const out: NonNullable<DecodedExtensions['authorityKeyIdentifier']> = {};
  for (const t of children(der, top(der, TAG.SEQUENCE, 'authority key identifier'))) {
    if (t.tag === 0x80) out.keyIdentifier = hex(value(der, t));
    else if (t.tag === 0xa1) out.issuer = readGeneralNames(der, t).map((n) => n.value);
    else if (t.tag === 0x82) out.serial = readUnsignedHex(der, { ...t, tag: TAG.INTEGER });
    else throw new DerError('unexpected field in authority key identifier', t.start);
  }
  return out;
}

/** Every full name of every distribution point (URIs in practice). */
function distributionPoints(der: Uint8Array): string[] {
  const out: string[] = [];
  for (const dp of children(der, top(der, TAG.SEQUENCE, 'CRL distribution points'))) {
    const name = children(der, expectTag(dp, TAG.SEQUENCE, 'distribution point')).find((t) => t.tag === 0xa0);
    const fullName = name && children(der, name).find((t) => t.tag === 0xa0);
    if (fullName) for (const n of readGeneralNames(der, fullName)) out.push(n.value);
  }
  return out;
}

function authorityInfoAccess(der: Uint8Array): { ocsp: string[]; caIssuers: string[] } {
  const out = { ocsp: [] as string[], caIssuers: [] as string[] };
  for (const ad of children(der, top(der, TAG.SEQUENCE, 'authority information access'))) {
    const [method, location] = children(der, expectTag(ad, TAG.SEQUENCE, 'access description'));
    if (!method || !location) throw new DerError('malformed access description', ad.start);
    const kind = ACCESS_METHODS[readOid(der, method)];
    const name = readGeneralName(der, location).value;
    if (kind === 'OCSP') out.ocsp.push(name);
    else if (kind === 'caIssuers') out.caIssuers.push(name);
  }
  return out;
}

function certificatePolicies(der: Uint8Array): { oid: string; cps?: string[] }[] {
  return children(der, top(der, TAG.SEQUENCE, 'certificate policies')).map((pi) => {
    const [id, qualifiers] = children(der, expectTag(pi, TAG.SEQUENCE, 'policy information'));
    if (!id) throw new DerError('policy without identifier', pi.start);
    const policy: { oid: string; cps?: string[] } = { oid: readOid(der, id) };
    for (const q of qualifiers ? children(der, expectTag(qualifiers, TAG.SEQUENCE, 'policy qualifiers')) : []) {
      const [qid, qualifier] = children(der, expectTag(q, TAG.SEQUENCE, 'policy qualifier'));
      if (!qid || !qualifier) throw new DerError('malformed policy qualifier', q.start);
      if (readOid(der, qid) === CPS) (policy.cps ??= []).push(readString(der, qualifier));
    }
    return policy;
  });
}

function nameConstraints(der: Uint8Array): { permitted: SubjectAlternateName[]; excluded: SubjectAlternateName[] } {
  const out = { permitted: [] as SubjectAlternateName[], excluded: [] as SubjectAlternateName[] };
  for (const subtrees of children(der, top(der, TAG.SEQUENCE, 'name constraints'))) {
    const list = subtrees.tag === 0xa0 ? out.permitted : subtrees.tag === 0xa1 ? out.excluded : undefined;
    if (!list) throw new DerError('unexpected field in name constraints', subtrees.start);
    for (const subtree of children(der, subtrees)) {
      const [base] = children(der, expectTag(subtree, TAG.SEQUENCE, 'general subtree'));
      if (!base) throw new DerError('empty general subtree', subtree.start);
      list.push(readGeneralName(der, base));
    }
  }
  return out;
}

/** Number of SCTs in an embedded SignedCertificateTimestampList (RFC 6962 §3.3, TLS encoding). */
function sctCount(der: Uint8Array): number {
  const list = value(der, top(der, TAG.OCTET_STRING, 'SCT list'));
  if (list.length < 2 || ((list[0]! << 8) | list[1]!) !== list.length - 2) throw new DerError('malformed SCT list', 0);
  let count = 0;
  for (let pos = 2; pos < list.length; count++) {
    if (pos + 2 > list.length) throw new DerError('truncated SCT', pos);
    pos += 2 + ((list[pos]! << 8) | list[pos + 1]!);
    if (pos > list.length) throw new DerError('truncated SCT', pos);
  }
  return count;
}

export interface ReadExtensions {
  extensions: DecodedExtensions;
  subjectAlternateNames: SubjectAlternateName[];
}

/** Decodes `Extensions` (SEQUENCE OF Extension) at `tlv`. */
export function readExtensions(buf: Uint8Array, tlv: Tlv): ReadExtensions {
  const extensions: DecodedExtensions = { all: [] };
  let subjectAlternateNames: SubjectAlternateName[] = [];
  const seen = new Set<string>();
  for (const ext of children(buf, expectTag(tlv, TAG.SEQUENCE, 'extensions'))) {
    const parts = children(buf, expectTag(ext, TAG.SEQUENCE, 'extension'));
    const [idTlv] = parts;
    const valueTlv = parts[parts.length - 1];
    if (!idTlv || !valueTlv || parts.length > 3 || parts.length < 2) throw new DerError('malformed extension', ext.start);
    const oid = readOid(buf, idTlv);
    const critical = parts.length === 3 ? readBoolean(buf, parts[1]!) : false;
    const der = value(buf, expectTag(valueTlv, TAG.OCTET_STRING, 'extension value'));
    const entry: DecodedExtensions['all'][number] = { oid, critical };
    extensions.all.push(entry);
    // RFC 5280 forbids repeating an extension: the first occurrence is the one decoded.
    if (seen.has(oid)) continue;
    seen.add(oid);
    try {
      switch (oid) {
        case EXTENSIONS.subjectAltName:
          subjectAlternateNames = readGeneralNamesDer(der);
          break;
        case EXTENSIONS.keyUsage:
          extensions.keyUsage = { critical, usages: keyUsage(der) };
          break;
        case EXTENSIONS.extKeyUsage:
          extensions.extendedKeyUsage = { critical, usages: extendedKeyUsage(der) };
          break;
        case EXTENSIONS.basicConstraints:
          extensions.basicConstraints = { critical, ...basicConstraints(der) };
          break;
        case EXTENSIONS.subjectKeyIdentifier:
          extensions.subjectKeyIdentifier = hex(value(der, top(der, TAG.OCTET_STRING, 'subject key identifier')));
          break;
        case EXTENSIONS.authorityKeyIdentifier:
          extensions.authorityKeyIdentifier = authorityKeyIdentifier(der);
          break;
        case EXTENSIONS.crlDistributionPoints:
          extensions.crlDistributionPoints = distributionPoints(der);
          break;
        case EXTENSIONS.authorityInfoAccess:
          extensions.authorityInfoAccess = authorityInfoAccess(der);
          break;
        case EXTENSIONS.certificatePolicies:
          extensions.certificatePolicies = certificatePolicies(der);
          break;
        case EXTENSIONS.nameConstraints:
          extensions.nameConstraints = { critical, ...nameConstraints(der) };
          break;
        case EXTENSIONS.ctPrecertificateScts:
          extensions.sctCount = sctCount(der);
          break;
        default:
          // Clients list what a decoder could not interpret with its bytes (Horizon's unsupportedExtensions).
          entry.hex = hex(der);
      }
    } catch (err) {
      if (!(err instanceof DerError)) throw err;
      entry.malformed = true;
    }
  }
  return { extensions, subjectAlternateNames };
}
