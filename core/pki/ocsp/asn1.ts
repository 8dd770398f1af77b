import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ProblemError } from '../../errors/index.js';
import { DerError, hex, readTlv } from '../der/reader.js';
import { MAX_OBJECT_BYTES } from '../input.js';
import { decodeName } from '../names.js';
import { SIGNATURE_ALGORITHMS } from '../oids.js';
import type { CertificateInfo } from '../x509/model.js';
import { formatIp } from '../x509/general-names.js';
import { parseCertificate } from '../x509/parse.js';
import { DIGEST_ALGORITHMS } from '../oids.js';

/**
 * What the pkijs-based decoders (OCSP, TSP) share: a bounded parse of untrusted bytes into a pkijs
 * object where every failure is a PKI-00x problem, and small readers of pkijs values into the toolkit's
 * conventions (lower-case hex, RFC 4514 DNs, epoch ms, OpenSSL algorithm names).
 */

/** Deeper than any real OCSP or TSP object (a TSP reply's signing-certificate attribute reaches ~20). */
const MAX_DEPTH = 64;
/** asn1js' default of 10 000 nodes is below an OCSP response listing a few thousand serials. */
const MAX_NODES = 500_000;

/** BER bytes to an asn1js tree, within depth, node and size bounds. Trailing bytes are refused. */
export function parseAsn1(der: Uint8Array, what: string): asn1js.AsnType {
  if (der.length > MAX_OBJECT_BYTES) throw new ProblemError('PKI-004', { detail: `the ${what} exceeds ${MAX_OBJECT_BYTES} bytes` });
  let asn1: ReturnType<typeof asn1js.fromBER>;
  try {
    asn1 = asn1js.fromBER(der, { maxDepth: MAX_DEPTH, maxNodes: MAX_NODES, maxContentLength: MAX_OBJECT_BYTES });
  } catch {
    // asn1js reports most faults in its result but throws on some values (a time that is not one).
    throw new ProblemError('PKI-001', { detail: `the ${what} holds a value that is not valid` });
  }
  if (asn1.offset === -1) {
    const error = asn1.result.error;
    if (/depth/i.test(error)) throw new ProblemError('PKI-005', { detail: `the ${what} is nested deeper than ${MAX_DEPTH} levels` });
    if (/node count|content length/i.test(error)) throw new ProblemError('PKI-004', { detail: `the ${what}: ${error}` });
    throw new ProblemError('PKI-001', { detail: `the ${what} is not valid DER: ${error}` });
  }
  if (asn1.offset !== der.length) throw new ProblemError('PKI-001', { detail: `${der.length - asn1.offset} bytes after the ${what}` });
  return asn1.result;
}

/**
 * A pkijs object from a parsed tree. pkijs throws when the tree does not fit the class's schema:
 * well-formed DER of another kind is PKI-002; anything else it trips on is unreadable (PKI-001).
 */
export function fromTree<T>(build: (schema: asn1js.AsnType) => T, tree: asn1js.AsnType, what: string): T {
  try {
    return build(tree);
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    if (/schema was not verified/i.test(message)) throw new ProblemError('PKI-002', { detail: `not a ${what}` });
    throw new ProblemError('PKI-001', { detail: `unreadable ${what}` });
  }
}

/** parseAsn1 then fromTree. */
export function parsePkijs<T>(der: Uint8Array, build: (schema: asn1js.AsnType) => T, what: string): T {
  return fromTree(build, parseAsn1(der, what), what);
}

/** Runs a DER-reader step over bytes pkijs kept; its DerError is PKI-001. */
export function readDer<T>(what: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof DerError) throw new ProblemError('PKI-001', { detail: `${what}: ${err.message}` });
    throw err;
  }
}

/** A pkijs Date as epoch ms; a time asn1js could not make sense of is unreadable input. */
export function epochMs(date: Date, what: string): number {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new ProblemError('PKI-001', { detail: `${what} is not a valid time` });
  return ms;
}

export const bytesOf = (view: ArrayBuffer | ArrayBufferView): Uint8Array =>
  view instanceof ArrayBuffer ? new Uint8Array(view) : new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/** An INTEGER as lower-case hex without sign padding (serials, nonces), like the X.509 decoder. */
export function integerHex(value: asn1js.Integer): string {
  const bytes = value.valueBlock.valueHexView;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return hex(bytes.subarray(start));
}

/** A Name as RFC 4514 text with OpenSSL's attribute names. */
export function nameDn(name: pkijs.RelativeDistinguishedNames): string {
  const der = new Uint8Array(name.valueBeforeDecode.byteLength ? name.valueBeforeDecode : name.toSchema().toBER());
  return readDer('name', () => decodeName(der, readTlv(der, 0)).dn);
}

/** GENERAL_NAME_print's labels, by GeneralName choice. */
const GENERAL_NAME_LABELS = ['othername', 'email', 'DNS', 'X400Name', 'DirName', 'EdiPartyName', 'URI', 'IP Address', 'Registered ID'];

/** A GeneralName: the DN for a directoryName, `label:value` (OpenSSL's labels) for the others. */
export function generalName(name: pkijs.GeneralName): string {
  if (name.type === 4 && name.value instanceof pkijs.RelativeDistinguishedNames) return nameDn(name.value);
  const label = GENERAL_NAME_LABELS[name.type] ?? String(name.type);
  if (typeof name.value === 'string') return `${label}:${name.value}`;
  if (name.type === 7 && name.value instanceof asn1js.OctetString) return `${label}:${readDer('IP address', () => formatIp((name.value as asn1js.OctetString).valueBlock.valueHexView))}`;
  return `${label}:<unsupported>`;
}

/** Digest algorithms by OID (one table for the toolkit, in oids.ts). */
export const HASH_ALGORITHMS = DIGEST_ALGORITHMS;

export const hashName = (oid: string): string => HASH_ALGORITHMS[oid] ?? oid;
/** Key algorithms CMS signers often give as their signature algorithm (OpenSSL's names). */
const KEY_ALGORITHM_NAMES: Record<string, string> = { '1.2.840.113549.1.1.1': 'rsaEncryption', '1.2.840.10045.2.1': 'id-ecPublicKey' };
export const signatureName = (oid: string): string => SIGNATURE_ALGORITHMS[oid] ?? KEY_ALGORITHM_NAMES[oid] ?? oid;

/** An embedded certificate: its DER, its public key and the toolkit's decoding of it. */
export interface EmbeddedCertificate {
  der: Uint8Array;
  spki: Uint8Array;
  /** The BIT STRING content of the public key (what OCSP's byKey responder id hashes). */
  publicKey: Uint8Array;
  info: CertificateInfo;
}

/** pkijs certificate choices (CMS also allows attribute and other certificates: those are skipped). */
export function embeddedCertificates(certs: readonly unknown[] | undefined): EmbeddedCertificate[] {
  const out: EmbeddedCertificate[] = [];
  for (const cert of certs ?? []) {
    if (!(cert instanceof pkijs.Certificate)) continue;
    // pkijs re-encodes from the bytes it kept (tbsView); for the DER these objects must be, that is the original.
    const der = new Uint8Array(cert.toSchema().toBER());
    const info = readDer('embedded certificate', () => parseCertificate(der));
    out.push({
      der,
      spki: new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER()),
      publicKey: cert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView,
      info,
    });
  }
  return out;
}

/** An extension's value, with the OCTET STRING nonce wrapping (RFC 8954 §2.1) taken off when present. */
export function nonceHex(extensions: pkijs.Extension[] | undefined, oid: string): string | undefined {
  const ext = extensions?.find((e) => e.extnID === oid);
  if (!ext) return undefined;
  const raw = ext.extnValue.valueBlock.valueHexView;
  // Some responders put the nonce bytes directly in extnValue; OpenSSL and RFC 8954 wrap them once more.
  if (raw[0] === 0x04) {
    try {
      const inner = readTlv(raw, 0);
      if (inner.end === raw.length) return hex(raw.subarray(inner.valueStart));
    } catch {
      // not wrapped
    }
  }
  return hex(raw);
}
