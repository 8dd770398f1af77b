import { children, DerError, expectTag, hex, readBitString, readBoolean, readOid, readSmallInt, readTime, readTlv, TAG, value, type Tlv } from '../der/reader.js';
import { readGeneralNames } from '../x509/general-names.js';

/** GeneralNames as plain strings (URIs bare, directory names as RFC 4514 DNs), as the CRL cache compares them. */
const generalNames = (buf: Uint8Array, tlv: Tlv): string[] => readGeneralNames(buf, tlv).map((n) => n.value);

/** The one TLV that makes up `bytes` (an extension's OCTET STRING content). */
export function single(bytes: Uint8Array): Tlv {
  const tlv = readTlv(bytes, 0);
  if (tlv.end !== bytes.length) throw new DerError('trailing bytes in an extension value', tlv.end);
  return tlv;
}

/**
 * Revocation reasons (RFC 5280 §5.3.1) by code, named as the compat clients name them (upper case, no
 * separators; code 7 is unused).
 */
export const REVOCATION_REASONS: Record<number, string> = {
  0: 'UNSPECIFIED',
  1: 'KEYCOMPROMISE',
  2: 'CACOMPROMISE',
  3: 'AFFILIATIONCHANGED',
  4: 'SUPERSEDED',
  5: 'CESSATIONOFOPERATION',
  6: 'CERTIFICATEHOLD',
  8: 'REMOVEFROMCRL',
  9: 'PRIVILEGEWITHDRAWN',
  10: 'AACOMPROMISE',
};

/** ReasonFlags bit order (onlySomeReasons): bit 0 is unused. */
const REASON_FLAGS = ['unused', 'KEYCOMPROMISE', 'CACOMPROMISE', 'AFFILIATIONCHANGED', 'SUPERSEDED', 'CESSATIONOFOPERATION', 'CERTIFICATEHOLD', 'PRIVILEGEWITHDRAWN', 'AACOMPROMISE'];

export interface AuthorityKeyIdentifier {
  keyIdentifier?: string;
  issuer?: string[];
  serial?: string;
}

export interface IssuingDistributionPoint {
  /** distributionPoint fullName, one string per GeneralName (URIs bare). */
  fullName?: string[];
  /** distributionPoint nameRelativeToCRLIssuer, as hex DER (rare; printed by nobody). */
  nameRelativeToCrlIssuer?: string;
  onlyContainsUserCerts: boolean;
  onlyContainsCACerts: boolean;
  onlySomeReasons?: string[];
  indirectCrl: boolean;
  onlyContainsAttributeCerts: boolean;
}

/** One extension: its OID, criticality and the DER inside its OCTET STRING. */
export interface RawExtension {
  oid: string;
  critical: boolean;
  value: Uint8Array;
}

/** Extensions ::= SEQUENCE OF Extension, at `tlv`. */
export function readExtensions(buf: Uint8Array, tlv: Tlv): RawExtension[] {
  expectTag(tlv, TAG.SEQUENCE, 'extensions');
  return children(buf, tlv).map((ext) => {
    const parts = children(buf, expectTag(ext, TAG.SEQUENCE, 'extension'));
    const oid = readOid(buf, parts[0] ?? ext);
    let critical = false;
    let valueTlv = parts[1];
    if (valueTlv?.tag === TAG.BOOLEAN) {
      critical = readBoolean(buf, valueTlv);
      valueTlv = parts[2];
    }
    if (!valueTlv) throw new DerError('extension without a value', ext.start);
    return { oid, critical, value: value(buf, expectTag(valueTlv, TAG.OCTET_STRING, 'extension value')) };
  });
}

/** An INTEGER of any size as a decimal string (CRL numbers may be 20 octets). */
export function bigIntegerText(bytes: Uint8Array): string {
  const tlv = expectTag(single(bytes), TAG.INTEGER, 'integer');
  if (tlv.end === tlv.valueStart) throw new DerError('empty integer', tlv.start);
  let n = 0n;
  for (let i = tlv.valueStart; i < tlv.end; i++) n = (n << 8n) | BigInt(bytes[i]!);
  if (bytes[tlv.valueStart]! & 0x80) n -= 1n << BigInt(8 * (tlv.end - tlv.valueStart));
  return n.toString(10);
}

export function authorityKeyIdentifier(bytes: Uint8Array): AuthorityKeyIdentifier {
  const out: AuthorityKeyIdentifier = {};
  for (const part of children(bytes, expectTag(single(bytes), TAG.SEQUENCE, 'authorityKeyIdentifier'))) {
    if (part.tag === 0x80) out.keyIdentifier = hex(value(bytes, part));
    else if (part.tag === 0xa1) out.issuer = generalNames(bytes, part);
    else if (part.tag === 0x82) out.serial = hex(value(bytes, part));
  }
  return out;
}

export function issuingDistributionPoint(bytes: Uint8Array): IssuingDistributionPoint {
  const out: IssuingDistributionPoint = { onlyContainsUserCerts: false, onlyContainsCACerts: false, indirectCrl: false, onlyContainsAttributeCerts: false };
  const flag = (t: Tlv): boolean => readBoolean(bytes, { ...t, tag: TAG.BOOLEAN });
  for (const part of children(bytes, expectTag(single(bytes), TAG.SEQUENCE, 'issuingDistributionPoint'))) {
    switch (part.tag) {
      case 0xa0: {
        const [name] = children(bytes, part);
        if (name?.tag === 0xa0) out.fullName = generalNames(bytes, name);
        else if (name?.tag === 0xa1) out.nameRelativeToCrlIssuer = hex(value(bytes, name));
        break;
      }
      case 0x81:
        out.onlyContainsUserCerts = flag(part);
        break;
      case 0x82:
        out.onlyContainsCACerts = flag(part);
        break;
      case 0x83:
        out.onlySomeReasons = reasonFlags(bytes, part);
        break;
      case 0x84:
        out.indirectCrl = flag(part);
        break;
      case 0x85:
        out.onlyContainsAttributeCerts = flag(part);
        break;
      default:
        throw new DerError('unexpected field in issuingDistributionPoint', part.start);
    }
  }
  return out;
}

function reasonFlags(bytes: Uint8Array, tlv: Tlv): string[] {
  const { bytes: bits } = readBitString(bytes, { ...tlv, tag: TAG.BIT_STRING });
  const out: string[] = [];
  for (let i = 0; i < REASON_FLAGS.length && i < bits.length * 8; i++) {
    if (i > 0 && bits[i >> 3]! & (0x80 >> (i & 7))) out.push(REASON_FLAGS[i]!);
  }
  return out;
}

/** Entry extensions the CRL cache and clients read: reason, invalidity date, certificate issuer. */
export interface EntryExtensions {
  reason?: string;
  invalidityDate?: number;
  certificateIssuer?: string[];
}

/** The last byte of the three entry-extension OIDs 2.5.29.{21,24,29} (06 03 55 1d xx). */
const REASON = 21;
const INVALIDITY_DATE = 24;
const CERTIFICATE_ISSUER = 29;

/**
 * crlEntryExtensions at `tlv`, read in place: this runs once per entry of CRLs with 100k+ entries, so
 * OIDs are compared by their bytes and no sub-buffers or OID strings are made.
 */
export function entryExtensions(buf: Uint8Array, tlv: Tlv): EntryExtensions {
  expectTag(tlv, TAG.SEQUENCE, 'entry extensions');
  const out: EntryExtensions = {};
  for (let pos = tlv.valueStart; pos < tlv.end; ) {
    const ext = expectTag(readTlv(buf, pos, tlv.end), TAG.SEQUENCE, 'extension');
    pos = ext.end;
    const oid = expectTag(readTlv(buf, ext.valueStart, ext.end), TAG.OID, 'extension id');
    let field = readTlv(buf, oid.end, ext.end);
    if (field.tag === TAG.BOOLEAN) field = readTlv(buf, field.end, ext.end);
    expectTag(field, TAG.OCTET_STRING, 'extension value');
    if (field.end !== ext.end) throw new DerError('unexpected field in an extension', field.end);
    const known = oid.end - oid.valueStart === 3 && buf[oid.valueStart] === 0x55 && buf[oid.valueStart + 1] === 0x1d ? buf[oid.valueStart + 2] : -1;
    if (known !== REASON && known !== INVALIDITY_DATE && known !== CERTIFICATE_ISSUER) continue;
    const inner = readTlv(buf, field.valueStart, field.end);
    if (inner.end !== field.end) throw new DerError('trailing bytes in an extension value', inner.end);
    if (known === REASON) {
      const code = readSmallInt(buf, expectTag(inner, TAG.ENUMERATED, 'reasonCode'));
      out.reason = REVOCATION_REASONS[code] ?? `UNKNOWN(${code})`;
    } else if (known === INVALIDITY_DATE) {
      out.invalidityDate = readTime(buf, inner);
    } else {
      out.certificateIssuer = generalNames(buf, expectTag(inner, TAG.SEQUENCE, 'certificateIssuer'));
    }
  }
  return out;
}
