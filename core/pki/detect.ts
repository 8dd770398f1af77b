import { ProblemError } from '../errors/index.js';
import { children, DerError, readOid, readSmallInt, readTop, readUnsignedHex, TAG, value, walk, type Tlv } from './der/reader.js';
import { decodeParam, fromBase64, MAX_OBJECT_BYTES, pemBlocks } from './input.js';
import { decodeName } from './names.js';
import { CURVES, SIGNATURE_ALGORITHMS } from './oids.js';
import { berToDer } from './pkcs7/ber.js';

export type DetectedType =
  | 'certificate'
  | 'csr'
  | 'crl'
  | 'pkcs7'
  | 'pkcs12'
  | 'private-key-pkcs1'
  | 'private-key-pkcs8'
  | 'private-key-sec1'
  | 'encrypted-private-key'
  | 'public-key'
  | 'openssh-private-key'
  | 'openssh-public-key'
  | 'openssh-certificate'
  | 'ocsp-request'
  | 'ocsp-response'
  | 'tsp-query'
  | 'tsp-reply'
  | 'jwk'
  | 'unknown';

export interface Detection {
  type: DetectedType;
  encoding: 'pem' | 'base64' | 'der' | 'json' | 'openssh';
  /** The PEM label when the input was PEM. */
  label?: string;
  /** A few cheap facts (subject, algorithm, counts…); never key material. */
  details?: Record<string, unknown>;
}

/** Deepest nesting accepted (real PKIX objects stay under 12 levels). */
export const MAX_DEPTH = 32;

/** PEM labels (RFC 7468 and OpenSSL's own) → type. Decided by label alone when present. */
const LABELS: Record<string, DetectedType> = {
  CERTIFICATE: 'certificate',
  'X509 CERTIFICATE': 'certificate',
  'TRUSTED CERTIFICATE': 'certificate',
  'CERTIFICATE REQUEST': 'csr',
  'NEW CERTIFICATE REQUEST': 'csr',
  'X509 CRL': 'crl',
  PKCS7: 'pkcs7',
  CMS: 'pkcs7',
  PKCS12: 'pkcs12',
  'RSA PRIVATE KEY': 'private-key-pkcs1',
  'DSA PRIVATE KEY': 'private-key-pkcs1',
  'EC PRIVATE KEY': 'private-key-sec1',
  'PRIVATE KEY': 'private-key-pkcs8',
  'ENCRYPTED PRIVATE KEY': 'encrypted-private-key',
  'PUBLIC KEY': 'public-key',
  'RSA PUBLIC KEY': 'public-key',
  'OPENSSH PRIVATE KEY': 'openssh-private-key',
  'OCSP REQUEST': 'ocsp-request',
  'OCSP RESPONSE': 'ocsp-response',
};

/** How each type is named in messages. */
const NAMES: Record<DetectedType, string> = {
  certificate: 'an X.509 certificate',
  csr: 'a PKCS#10 certificate request',
  crl: 'a CRL',
  pkcs7: 'a PKCS#7 / CMS object',
  pkcs12: 'a PKCS#12 file',
  'private-key-pkcs1': 'a PKCS#1 private key',
  'private-key-pkcs8': 'a PKCS#8 private key',
  'private-key-sec1': 'a SEC1 EC private key',
  'encrypted-private-key': 'an encrypted private key',
  'public-key': 'a public key',
  'openssh-private-key': 'an OpenSSH private key',
  'openssh-public-key': 'an OpenSSH public key',
  'openssh-certificate': 'an OpenSSH certificate',
  'ocsp-request': 'an OCSP request',
  'ocsp-response': 'an OCSP response',
  'tsp-query': 'a time-stamp query',
  'tsp-reply': 'a time-stamp reply',
  jwk: 'a JWK',
  unknown: 'an unknown object',
};

const SSH_LINE = /^((?:ssh|ecdsa|sk|x509v3)-[A-Za-z0-9@.-]+)\s+([A-Za-z0-9+/]+={0,3})(?:\s+(.*))?$/;
const OPENSSH_MAGIC = 'openssh-key-v1\0';

/**
 * What an input is. Text: a JWK (JSON with `kty`), an OpenSSH key line, PEM (decided by its label), or
 * base64 / DER (decided by the DER structure's shape, walked to a bounded depth). Undecodable input is
 * PKI-001, too large PKI-004, nested too deep PKI-005; well-formed DER of no known shape is `unknown`.
 */
export function detect(input: string | Uint8Array | Record<string, unknown>): Detection {
  if (input instanceof Uint8Array) {
    if (input.length > MAX_OBJECT_BYTES * 2) throw tooLarge();
    if (input[0] === 0x30) return { encoding: 'der', ...classifyDer(input) };
    return detect(Buffer.from(input).toString('latin1'));
  }
  if (typeof input === 'object' && input !== null) return detectJson(input);
  if (input.length > MAX_OBJECT_BYTES * 2) throw tooLarge();
  const text = decodeParam(input.trim());
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ProblemError('PKI-001', { detail: 'text starting with { is not JSON' });
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return detectJson(parsed as Record<string, unknown>);
    return { type: 'unknown', encoding: 'json' };
  }
  const ssh = SSH_LINE.exec(text);
  if (ssh) return detectSshLine(ssh[1]!, ssh[2]!, ssh[3]);
  if (text.includes('-----BEGIN')) return detectPem(text);
  const der = fromBase64(text);
  if (!der) throw new ProblemError('PKI-001', { detail: 'neither PEM, base64, DER, an OpenSSH key nor JSON' });
  if (der.length > MAX_OBJECT_BYTES) throw tooLarge();
  if (der[0] !== 0x30) {
    const binary = detectSshBinary(der);
    if (binary) return { encoding: 'base64', ...binary };
  }
  return { encoding: 'base64', ...classifyDer(der) };
}

const tooLarge = (): ProblemError => new ProblemError('PKI-004', { detail: `more than ${MAX_OBJECT_BYTES} bytes` });

function detectJson(obj: Record<string, unknown>): Detection {
  if (typeof obj.kty === 'string') {
    const details: Record<string, unknown> = { kty: obj.kty, private: 'd' in obj || 'k' in obj };
    for (const field of ['crv', 'alg', 'kid', 'use']) if (typeof obj[field] === 'string') details[field] = obj[field];
    return { type: 'jwk', encoding: 'json', details };
  }
  if (Array.isArray(obj.keys) && obj.keys.every((k) => typeof k === 'object' && k !== null && typeof (k as { kty?: unknown }).kty === 'string')) {
    return { type: 'jwk', encoding: 'json', details: { set: true, keys: obj.keys.length } };
  }
  return { type: 'unknown', encoding: 'json' };
}

function detectPem(text: string): Detection {
  const blocks = pemBlocks(text);
  const first = blocks[0];
  if (!first) throw new ProblemError('PKI-001', { detail: 'no complete PEM block' });
  if (first.der.length > MAX_OBJECT_BYTES) throw tooLarge();
  const label = first.label;
  const more = blocks.length > 1 ? { blocks: blocks.length } : {};
  if (label === 'OPENSSH PRIVATE KEY') {
    const ssh = detectSshBinary(first.der);
    if (ssh?.type !== 'openssh-private-key') throw new ProblemError('PKI-001', { detail: 'the OPENSSH PRIVATE KEY block is not openssh-key-v1' });
    return { encoding: 'pem', label, ...ssh };
  }
  // Legacy OpenSSL encryption (RFC 1421 headers): the body is ciphertext, there is no DER to look at.
  const block = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END`).exec(text)?.[1] ?? '';
  if (/Proc-Type:\s*4,\s*ENCRYPTED/i.test(block)) {
    const cipher = /DEK-Info:\s*([^,\s]+)/i.exec(block)?.[1];
    return { type: 'encrypted-private-key', encoding: 'pem', label, details: { format: 'legacy-pem', ...(cipher ? { cipher } : {}) } };
  }
  const shape = classifyDer(first.der);
  const byLabel = LABELS[label];
  if (!byLabel) return { encoding: 'pem', label, ...shape, details: { ...shape.details, ...more } };
  const details = byLabel === shape.type ? { ...shape.details, ...more } : more;
  return { type: byLabel, encoding: 'pem', label, ...(Object.keys(details).length > 0 ? { details } : {}) };
}

/** `ssh-ed25519 AAAA… comment`: the blob must start with the same key type (RFC 4253 §6.6). */
function detectSshLine(keyType: string, b64: string, comment: string | undefined): Detection {
  const blob = fromBase64(b64);
  const inner = blob ? sshString(blob, 0) : null;
  if (!blob || !inner || inner.text !== keyType) throw new ProblemError('PKI-001', { detail: `the ${keyType} key blob does not start with its key type` });
  const certificate = keyType.endsWith('-cert-v01@openssh.com');
  const details: Record<string, unknown> = { keyType };
  if (comment) details.comment = comment.trim();
  return { type: certificate ? 'openssh-certificate' : 'openssh-public-key', encoding: 'openssh', details };
}

/** Binary OpenSSH formats sent as base64: a private key (openssh-key-v1) or a public key / certificate blob. */
function detectSshBinary(bytes: Uint8Array): { type: DetectedType; details: Record<string, unknown> } | null {
  if (Buffer.from(bytes.subarray(0, OPENSSH_MAGIC.length)).toString('latin1') === OPENSSH_MAGIC) {
    const cipher = sshString(bytes, OPENSSH_MAGIC.length);
    const kdf = cipher && sshString(bytes, cipher.next);
    const kdfOptions = kdf && sshString(bytes, kdf.next);
    const publicKey = kdfOptions && kdfOptions.next + 4 <= bytes.length ? sshString(bytes, kdfOptions.next + 4) : null;
    const keyType = publicKey ? sshString(publicKey.bytes, 0)?.text : undefined;
    if (!cipher) return null;
    return { type: 'openssh-private-key', details: { cipher: cipher.text, encrypted: cipher.text !== 'none', ...(keyType ? { keyType } : {}) } };
  }
  const head = sshString(bytes, 0);
  if (!head || !/^(ssh|ecdsa|sk)-[a-z0-9@.-]+$/.test(head.text)) return null;
  return { type: head.text.endsWith('-cert-v01@openssh.com') ? 'openssh-certificate' : 'openssh-public-key', details: { keyType: head.text } };
}

/** An SSH wire string (uint32 length + bytes) at `at`; null when it runs past the end. */
function sshString(bytes: Uint8Array, at: number): { bytes: Uint8Array; text: string; next: number } | null {
  if (at + 4 > bytes.length) return null;
  const length = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  if (at + 4 + length > bytes.length) return null;
  const out = bytes.subarray(at + 4, at + 4 + length);
  return { bytes: out, text: Buffer.from(out).toString('latin1'), next: at + 4 + length };
}

const isDepthError = (err: unknown): boolean => err instanceof DerError && err.message.startsWith('nested deeper');

/**
 * The DER shape of `der`: the whole input must be one well-formed TLV no deeper than MAX_DEPTH (BER
 * framing is accepted for PKCS#7 / PKCS#12, which are often BER in the wild). DerError → PKI-001 or
 * PKI-005.
 */
export function classifyDer(der: Uint8Array): { type: DetectedType; details?: Record<string, unknown> } {
  try {
    let buf = der;
    try {
      walk(buf, MAX_DEPTH);
      readTop(buf, TAG.SEQUENCE, 'object');
    } catch (err) {
      if (!(err instanceof DerError) || isDepthError(err)) throw err;
      buf = berToDer(der, MAX_DEPTH);
      walk(buf, MAX_DEPTH);
    }
    const top = readTop(buf, TAG.SEQUENCE, 'object');
    return shapeOf(buf, children(buf, top));
  } catch (err) {
    if (!(err instanceof DerError)) throw err;
    if (isDepthError(err)) throw new ProblemError('PKI-005', { detail: err.message });
    const claimed = claimedLength(der);
    if (claimed > MAX_OBJECT_BYTES) throw new ProblemError('PKI-004', { detail: `the object claims ${claimed} bytes` });
    throw new ProblemError('PKI-001', { detail: err.message });
  }
}

/**
 * The problem for a decoder that failed on `der`, which should have been `expected`: PKI-002 when it is
 * recognisably something else, PKI-005 when nested too deeply, PKI-004 when a length claims more than
 * we accept, PKI-001 otherwise. ProblemErrors pass through; any other exception a decoder throws on
 * hostile bytes is reported as PKI-001 without internals.
 */
export function problemFor(err: unknown, der: Uint8Array, expected: DetectedType): ProblemError {
  if (err instanceof ProblemError) return err;
  let found: DetectedType = 'unknown';
  try {
    found = classifyDer(der).type;
  } catch (inner) {
    if (inner instanceof ProblemError && (inner.code === 'PKI-005' || inner.code === 'PKI-004')) return inner;
  }
  if (found !== 'unknown' && found !== expected) return wrongKind(expected, found);
  if (isDepthError(err)) return new ProblemError('PKI-005', { detail: (err as DerError).message });
  const claimed = claimedLength(der);
  if (claimed > MAX_OBJECT_BYTES) return new ProblemError('PKI-004', { detail: `the object claims ${claimed} bytes` });
  return new ProblemError('PKI-001', { detail: err instanceof DerError ? `${NAMES[expected]}: ${err.message}` : `malformed: not ${NAMES[expected]}` });
}

/** The length the outer header claims, read without trusting it. */
function claimedLength(der: Uint8Array): number {
  const first = der[1] ?? 0;
  if (!(first & 0x80)) return first;
  let length = 0;
  for (let i = 0; i < (first & 0x7f) && 2 + i < der.length; i++) length = length * 256 + der[2 + i]!;
  return length;
}

/** PKI-002: "expected a CRL, found an X.509 certificate". */
export function wrongKind(expected: DetectedType, found: DetectedType): ProblemError {
  return new ProblemError('PKI-002', { detail: `expected ${NAMES[expected]}, found ${NAMES[found]}` });
}

/** PEM label → type, for decoders that refuse a block of the wrong kind before reading it. */
export function typeOfLabel(label: string): DetectedType | undefined {
  return LABELS[label];
}

type Shape = { type: DetectedType; details?: Record<string, unknown> };

const OID_NAMES: Record<string, string> = {
  '1.2.840.113549.1.1.1': 'rsa',
  '1.2.840.113549.1.1.10': 'rsa-pss',
  '1.2.840.10045.2.1': 'ec',
  '1.3.101.110': 'x25519',
  '1.3.101.111': 'x448',
  '1.3.101.112': 'ed25519',
  '1.3.101.113': 'ed448',
  '1.2.840.10040.4.1': 'dsa',
  '1.2.840.113549.1.3.1': 'dh',
  '1.2.840.113549.1.5.13': 'PBES2',
  '1.2.840.113549.1.12.1.3': 'pbeWithSHA1And3-KeyTripleDES-CBC',
  '1.2.840.113549.1.12.1.6': 'pbeWithSHA1And40BitRC2-CBC',
  '1.2.840.113549.1.7.1': 'data',
  '1.2.840.113549.1.7.2': 'signedData',
  '1.2.840.113549.1.7.3': 'envelopedData',
  '1.2.840.113549.1.7.5': 'digestedData',
  '1.2.840.113549.1.7.6': 'encryptedData',
  '1.2.840.113549.1.9.16.1.2': 'authData',
  '1.2.840.113549.1.9.16.1.4': 'tstInfo',
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};
const OCSP_STATUS = ['successful', 'malformedRequest', 'internalError', 'tryLater', 'unused', 'sigRequired', 'unauthorized'];
const PKI_STATUS = ['granted', 'grantedWithMods', 'rejection', 'waiting', 'revocationWarning', 'revocationNotification'];

const isTime = (t: Tlv | undefined): boolean => t?.tag === TAG.UTC_TIME || t?.tag === TAG.GENERALIZED_TIME;
const oidName = (buf: Uint8Array, t: Tlv): string => {
  const oid = readOid(buf, t);
  return OID_NAMES[oid] ?? SIGNATURE_ALGORITHMS[oid] ?? oid;
};
/** The algorithm of an AlgorithmIdentifier (its first child must be an OID). */
const algorithmOf = (buf: Uint8Array, t: Tlv | undefined): string | undefined => {
  if (t?.tag !== TAG.SEQUENCE) return undefined;
  const first = children(buf, t)[0];
  return first?.tag === TAG.OID ? oidName(buf, first) : undefined;
};
const intValue = (buf: Uint8Array, t: Tlv | undefined): number | undefined => {
  if (t?.tag !== TAG.INTEGER && t?.tag !== TAG.ENUMERATED) return undefined;
  return t.end - t.valueStart <= 6 ? readSmallInt(buf, t) : undefined;
};
const tagsOf = (kids: Tlv[]): number[] => kids.map((k) => k.tag);

/** Classifies the top SEQUENCE's children `c` by the structure each PKIX / PKCS type is known to have. */
function shapeOf(buf: Uint8Array, c: Tlv[]): Shape {
  const [c0, c1, c2] = c;
  if (!c0) return { type: 'unknown' };
  // Signed objects: SEQUENCE { tbs SEQUENCE, algorithm SEQUENCE, signature BIT STRING }.
  if (c.length === 3 && c0.tag === TAG.SEQUENCE && c1?.tag === TAG.SEQUENCE && c2?.tag === TAG.BIT_STRING) {
    const signed = signedShape(buf, children(buf, c0));
    if (signed) return signed;
  }
  if (c0.tag === TAG.OID) {
    const contentType = oidName(buf, c0);
    if (readOid(buf, c0).startsWith('1.2.840.113549.1.7.') || contentType === 'authData') return { type: 'pkcs7', details: { contentType } };
  }
  const version = intValue(buf, c0);
  // PFX: version 3, authSafe ContentInfo (data or signedData), macData.
  if (version === 3 && c1?.tag === TAG.SEQUENCE && (c.length === 2 || c.length === 3)) {
    const contentType = algorithmOf(buf, c1);
    if (contentType === 'data' || contentType === 'signedData') return { type: 'pkcs12', details: { mac: c.length === 3 } };
  }
  // PrivateKeyInfo / OneAsymmetricKey: version 0|1, algorithm, OCTET STRING key.
  if ((version === 0 || version === 1) && c2?.tag === TAG.OCTET_STRING) {
    const algorithm = algorithmOf(buf, c1);
    if (algorithm) return { type: 'private-key-pkcs8', details: { algorithm, ...curveOf(buf, c1!) } };
  }
  // ECPrivateKey (SEC1): version 1, OCTET STRING key, [0] parameters, [1] public key.
  if (version === 1 && c1?.tag === TAG.OCTET_STRING && c.slice(2).every((k) => k.tag === 0xa0 || k.tag === 0xa1)) {
    const params = c.find((k) => k.tag === 0xa0);
    const curveOid = params && children(buf, params)[0];
    const curve = curveOid?.tag === TAG.OID ? CURVES[readOid(buf, curveOid)] ?? readOid(buf, curveOid) : undefined;
    return { type: 'private-key-sec1', details: { algorithm: 'ec', ...(curve ? { curve } : {}) } };
  }
  const allIntegers = tagsOf(c).every((t) => t === TAG.INTEGER);
  // RSAPrivateKey: version 0 and eight integers (version 1: multi-prime, ten or more fields).
  if (allIntegers && version === 0 && c.length === 9) return { type: 'private-key-pkcs1', details: { algorithm: 'rsa', bits: bitLength(buf, c1!) } };
  if (tagsOf(c.slice(0, 9)).every((t) => t === TAG.INTEGER) && version === 1 && c.length === 10) return { type: 'private-key-pkcs1', details: { algorithm: 'rsa', bits: bitLength(buf, c1!) } };
  // OpenSSL's traditional DSA key: version 0, p, q, g, y, x.
  if (allIntegers && version === 0 && c.length === 6) return { type: 'private-key-pkcs1', details: { algorithm: 'dsa', bits: bitLength(buf, c1!) } };
  if (c.length === 2 && c0.tag === TAG.SEQUENCE && c1) {
    const algorithm = algorithmOf(buf, c0);
    // SubjectPublicKeyInfo: algorithm, BIT STRING.
    if (algorithm && c1.tag === TAG.BIT_STRING) return { type: 'public-key', details: { format: 'spki', algorithm, ...curveOf(buf, c0) } };
    // EncryptedPrivateKeyInfo: algorithm, OCTET STRING.
    if (algorithm && c1.tag === TAG.OCTET_STRING) return { type: 'encrypted-private-key', details: { format: 'pkcs8', algorithm } };
  }
  // RSAPublicKey: modulus, exponent.
  if (allIntegers && c.length === 2) return { type: 'public-key', details: { format: 'pkcs1', algorithm: 'rsa', bits: bitLength(buf, c0) } };
  // TimeStampReq: version 1, messageImprint { algorithm, OCTET STRING }, …
  if (version === 1 && c1?.tag === TAG.SEQUENCE) {
    const imprint = children(buf, c1);
    if (imprint.length === 2 && imprint[1]!.tag === TAG.OCTET_STRING) {
      const hashAlgorithm = algorithmOf(buf, imprint[0]);
      if (hashAlgorithm) return { type: 'tsp-query', details: { hashAlgorithm, certReq: c.some((k) => k.tag === TAG.BOOLEAN && buf[k.valueStart] !== 0) } };
    }
  }
  // OCSPResponse: ENUMERATED status, [0] responseBytes.
  if (c0.tag === TAG.ENUMERATED && c.length <= 2 && (!c1 || c1.tag === 0xa0)) {
    const status = intValue(buf, c0) ?? -1;
    return { type: 'ocsp-response', details: { status: OCSP_STATUS[status] ?? status } };
  }
  // TimeStampResp: PKIStatusInfo { INTEGER status, … }, optional token ContentInfo.
  if (c0.tag === TAG.SEQUENCE && c.length <= 2 && (!c1 || algorithmOf(buf, c1) === 'signedData')) {
    const statusInfo = children(buf, c0);
    const status = intValue(buf, statusInfo[0]);
    if (status !== undefined && statusInfo[0]!.tag === TAG.INTEGER) return { type: 'tsp-reply', details: { status: PKI_STATUS[status] ?? status, token: c1 !== undefined } };
  }
  // OCSPRequest: tbsRequest { [0] version?, [1] requestor?, requestList SEQUENCE OF Request, [2]? }, [0] signature?
  if (c0.tag === TAG.SEQUENCE && c.length <= 2 && (!c1 || c1.tag === 0xa0)) {
    const tbs = children(buf, c0).filter((k) => k.tag === TAG.SEQUENCE);
    const list = tbs.length === 1 ? children(buf, tbs[0]!) : [];
    const certIds = list.map((r) => (r.constructed ? children(buf, r)[0] : undefined));
    if (list.length > 0 && certIds.every((id) => id?.tag === TAG.SEQUENCE && tagsOf(children(buf, id)).join() === '48,4,4,2')) {
      return { type: 'ocsp-request', details: { requests: list.length, signed: c1 !== undefined } };
    }
  }
  return { type: 'unknown' };
}

/** tbs of a signed object: certificate, CRL or CSR, told apart by the fields' tags. */
function signedShape(buf: Uint8Array, tbs: Tlv[]): Shape | null {
  const t = tbs[0]?.tag === 0xa0 ? tbs.slice(1) : tbs;
  // TBSCertificate: serial, signature, issuer, validity { time, time }, subject, spki.
  if (t[0]?.tag === TAG.INTEGER && t[1]?.tag === TAG.SEQUENCE && t[2]?.tag === TAG.SEQUENCE && t[3]?.tag === TAG.SEQUENCE && t[4]?.tag === TAG.SEQUENCE && t[5]?.tag === TAG.SEQUENCE) {
    const validity = children(buf, t[3]);
    if (validity.length === 2 && validity.every(isTime)) {
      return { type: 'certificate', details: { dn: decodeName(buf, t[4]).dn, issuer: decodeName(buf, t[2]).dn, serial: readUnsignedHex(buf, t[0]) } };
    }
  }
  if (tbs[0]?.tag === 0xa0) return null;
  // TBSCertList: version?, signature, issuer, thisUpdate, …
  const l = tbs[0]?.tag === TAG.INTEGER ? tbs.slice(1) : tbs;
  if (l[0]?.tag === TAG.SEQUENCE && l[1]?.tag === TAG.SEQUENCE && isTime(l[2])) return { type: 'crl', details: { issuer: decodeName(buf, l[1]).dn } };
  // CertificationRequestInfo: version 0, subject, spki, [0] attributes.
  if (tbs[0]?.tag === TAG.INTEGER && tbs[1]?.tag === TAG.SEQUENCE && tbs[2]?.tag === TAG.SEQUENCE && tbs[3]?.tag === 0xa0) {
    const algorithm = algorithmOf(buf, children(buf, tbs[2])[0]);
    return { type: 'csr', details: { dn: decodeName(buf, tbs[1]).dn, ...(algorithm ? { algorithm } : {}) } };
  }
  return null;
}

function curveOf(buf: Uint8Array, alg: Tlv): { curve?: string } {
  const params = children(buf, alg)[1];
  if (params?.tag !== TAG.OID) return {};
  const oid = readOid(buf, params);
  return { curve: CURVES[oid] ?? oid };
}

/** Bits of a positive INTEGER (an RSA modulus, a DSA prime). */
function bitLength(buf: Uint8Array, t: Tlv): number {
  const bytes = value(buf, t);
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return (bytes.length - i - 1) * 8 + (bytes[i] ? 32 - Math.clz32(bytes[i]!) : 0);
}
