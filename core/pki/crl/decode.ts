import { createHash } from 'node:crypto';
import { children, DerError, expectTag, readSmallInt, readTime, readTlv, readTop, readUnsignedHex, TAG, type Tlv } from '../der/reader.js';
import { problemFor } from '../detect.js';
import { decodeName, type DnElement } from '../names.js';
import { EXTENSIONS } from '../oids.js';
import { readSignatureAlgorithm } from '../x509/signature.js';
import { authorityKeyIdentifier, bigIntegerText, entryExtensions, issuingDistributionPoint, readExtensions, type AuthorityKeyIdentifier, type IssuingDistributionPoint } from './extensions.js';
import { opensslNameHash } from './name-hash.js';

/** One revoked certificate. */
export interface CrlEntry {
  /** Lower-case hex of the serial's value, as CertificateInfo.serial. */
  serial: string;
  /** Epoch ms. */
  revocationDate: number;
  /** UNSPECIFIED, KEYCOMPROMISE, … (see REVOCATION_REASONS); absent when the entry has no reason code. */
  reason?: string;
  invalidityDate?: number;
  /** Indirect CRLs: the issuer of this entry's certificate (carried over from earlier entries, RFC 5280 §5.3.3). */
  certificateIssuer?: string[];
}

export interface DecodedCrl {
  /** 1 or 2 (X.509 numbering). */
  version: number;
  issuer: string;
  issuerElements: DnElement[];
  /** OpenSSL's hash of the issuer name (`openssl crl -hash`). */
  issuerHash: string;
  thisUpdate: number;
  /** Epoch ms; null when the CRL names no next update. */
  nextUpdate: number | null;
  /** Decimal (CRL numbers run to 20 octets); null without the extension. */
  crlNumber: string | null;
  /** Present on delta CRLs: the number of the base CRL, decimal. */
  deltaCrlIndicator?: string;
  signingAlgorithm: string;
  authorityKeyIdentifier?: AuthorityKeyIdentifier;
  issuingDistributionPoint?: IssuingDistributionPoint;
  /** Every CRL extension as {oid, critical}. */
  extensions: { oid: string; critical: boolean }[];
  entries: CrlEntry[];
  thumbprints: { sha1: string; sha256: string };
}

/**
 * Input above this size (bytes of DER, or characters of PEM / base64) is decoded on the worker pool
 * (core/workers), not on the event loop. Decoding runs at about 45 ns a byte (2 µs an entry: a CRL of
 * 800 KiB, 20 000 entries, took 38 ms on the 2-core reference machine), so 64 KiB (~1 500 entries)
 * costs the event loop about 3 ms inline, the order of a hand-over to a thread; a 16 MiB CRL, the
 * largest accepted, would hold it for most of a second.
 */
export const CRL_INLINE_MAX_BYTES = 64 * 1024;

/** The parts of a CertificateList, by position (verifyCrl and the cache need the raw pieces). */
export interface CrlParts {
  tbs: Tlv;
  signatureAlgorithm: Tlv;
  signature: Tlv;
}

/**
 * Decodes a CRL (RFC 5280 §5) with the lean DER reader: CRLs of large CAs hold 100k+ entries, which an
 * object-graph parser builds far too slowly. Bad input is a ProblemError: PKI-002 when the bytes are
 * another kind of object, PKI-005 when nested too deeply, PKI-001 otherwise.
 */
export function decodeCrl(der: Uint8Array): DecodedCrl {
  try {
    return readCrl(der);
  } catch (err) {
    throw problemFor(err, der, 'crl');
  }
}

export function crlParts(der: Uint8Array): CrlParts {
  const top = readTop(der, TAG.SEQUENCE, 'CRL');
  const [tbs, signatureAlgorithm, signature, extra] = children(der, top);
  if (!tbs || !signatureAlgorithm || !signature || extra) throw new DerError('a CRL is tbsCertList, signatureAlgorithm, signature', top.start);
  expectTag(tbs, TAG.SEQUENCE, 'tbsCertList');
  expectTag(signatureAlgorithm, TAG.SEQUENCE, 'signatureAlgorithm');
  expectTag(signature, TAG.BIT_STRING, 'signature');
  // A certificate has the same outer shape: the tbs must start [version] signature issuer thisUpdate.
  let pos = tbs.valueStart;
  let field = readTlv(der, pos, tbs.end);
  if (field.tag === TAG.INTEGER) field = readTlv(der, (pos = field.end), tbs.end);
  const issuer = readTlv(der, field.end, tbs.end);
  const thisUpdate = readTlv(der, issuer.end, tbs.end);
  if (field.tag !== TAG.SEQUENCE || issuer.tag !== TAG.SEQUENCE || (thisUpdate.tag !== TAG.UTC_TIME && thisUpdate.tag !== TAG.GENERALIZED_TIME)) {
    throw new DerError('tbsCertList must be [version], signature, issuer, thisUpdate', pos);
  }
  return { tbs, signatureAlgorithm, signature };
}

function readCrl(der: Uint8Array): DecodedCrl {
  const { tbs, signatureAlgorithm } = crlParts(der);
  const fields = children(der, tbs);
  let i = 0;
  let version = 1;
  if (fields[i]?.tag === TAG.INTEGER) version = readSmallInt(der, fields[i++]!) + 1;
  if (version !== 1 && version !== 2) throw new DerError(`unknown CRL version ${version}`, tbs.start);
  const innerAlgorithm = expectTag(need(fields[i++], tbs, 'signature'), TAG.SEQUENCE, 'signature');
  const issuerTlv = need(fields[i++], tbs, 'issuer');
  const issuer = decodeName(der, issuerTlv);
  const thisUpdate = readTime(der, need(fields[i++], tbs, 'thisUpdate'));
  let nextUpdate: number | null = null;
  if (fields[i]?.tag === TAG.UTC_TIME || fields[i]?.tag === TAG.GENERALIZED_TIME) nextUpdate = readTime(der, fields[i++]!);
  let entries: CrlEntry[] = [];
  if (fields[i]?.tag === TAG.SEQUENCE) entries = readEntries(der, fields[i++]!);
  const crl: DecodedCrl = {
    version,
    issuer: issuer.dn,
    issuerElements: issuer.elements,
    issuerHash: opensslNameHash(der, issuerTlv),
    thisUpdate,
    nextUpdate,
    crlNumber: null,
    signingAlgorithm: readSignatureAlgorithm(der, signatureAlgorithm).name,
    extensions: [],
    entries,
    thumbprints: {
      sha1: createHash('sha1').update(der).digest('hex'),
      sha256: createHash('sha256').update(der).digest('hex'),
    },
  };
  if (!sameBytes(der, innerAlgorithm, signatureAlgorithm)) throw new DerError('signature algorithms inside and outside tbsCertList differ', innerAlgorithm.start);
  const extensions = fields[i];
  if (extensions?.tag === 0xa0) {
    i++;
    const [list, more] = children(der, extensions);
    if (!list || more) throw new DerError('crlExtensions must hold one SEQUENCE', extensions.start);
    for (const ext of readExtensions(der, list)) {
      crl.extensions.push({ oid: ext.oid, critical: ext.critical });
      if (ext.oid === EXTENSIONS.crlNumber) crl.crlNumber = bigIntegerText(ext.value);
      else if (ext.oid === EXTENSIONS.deltaCrlIndicator) crl.deltaCrlIndicator = bigIntegerText(ext.value);
      else if (ext.oid === EXTENSIONS.authorityKeyIdentifier) crl.authorityKeyIdentifier = authorityKeyIdentifier(ext.value);
      else if (ext.oid === EXTENSIONS.issuingDistributionPoint) crl.issuingDistributionPoint = issuingDistributionPoint(ext.value);
    }
  }
  if (i !== fields.length) throw new DerError('unexpected field in tbsCertList', fields[i]!.start);
  return crl;
}

/** revokedCertificates: read TLV by TLV (no per-entry arrays), the hot loop of big CRLs. */
function readEntries(der: Uint8Array, list: Tlv): CrlEntry[] {
  const entries: CrlEntry[] = [];
  let certificateIssuer: string[] | undefined;
  for (let pos = list.valueStart; pos < list.end; ) {
    const entry = expectTag(readTlv(der, pos, list.end), TAG.SEQUENCE, 'revoked certificate');
    pos = entry.end;
    const serial = readTlv(der, entry.valueStart, entry.end);
    const date = readTlv(der, serial.end, entry.end);
    const out: CrlEntry = { serial: readUnsignedHex(der, serial), revocationDate: readTime(der, date) };
    if (date.end < entry.end) {
      const extensions = readTlv(der, date.end, entry.end);
      if (extensions.end !== entry.end) throw new DerError('unexpected field in a revoked certificate', extensions.end);
      const ext = entryExtensions(der, extensions);
      if (ext.reason !== undefined) out.reason = ext.reason;
      if (ext.invalidityDate !== undefined) out.invalidityDate = ext.invalidityDate;
      if (ext.certificateIssuer) certificateIssuer = ext.certificateIssuer;
    }
    if (certificateIssuer) out.certificateIssuer = certificateIssuer;
    entries.push(out);
  }
  return entries;
}

function need(tlv: Tlv | undefined, parent: Tlv, what: string): Tlv {
  if (!tlv) throw new DerError(`tbsCertList without ${what}`, parent.end);
  return tlv;
}

function sameBytes(der: Uint8Array, a: Tlv, b: Tlv): boolean {
  return Buffer.compare(der.subarray(a.start, a.end), der.subarray(b.start, b.end)) === 0;
}
