/**
 * Builds and signs a CRL v2 (RFC 5280 §5) with the lean DER writer: version v2, the signer's algorithm,
 * the CA's name bytes, thisUpdate / nextUpdate, one entry per revoked serial (with a reasonCode entry
 * extension when a reason is given) and the CRL extensions authorityKeyIdentifier and cRLNumber.
 */
import { ProblemError } from '../../errors/index.js';
import { TAG } from '../der/reader.js';
import { bitString, explicit, implicit, octets, oid, seq, smallInt, time, tlv, unsignedInt } from '../der/writer.js';
import type { CaIdentity } from '../keys/ca-identity.js';
import { EXTENSIONS } from '../oids.js';

/** CRLReason (RFC 5280 §5.3.1) by name; 7 is not used. */
export const CRL_REASONS: readonly (string | undefined)[] = [
  'unspecified',
  'keyCompromise',
  'cACompromise',
  'affiliationChanged',
  'superseded',
  'cessationOfOperation',
  'certificateHold',
  undefined,
  'removeFromCRL',
  'privilegeWithdrawn',
  'aACompromise',
];

const REASON_CODES = new Map<string, number>();
CRL_REASONS.forEach((name, code) => {
  if (name) REASON_CODES.set(name.toLowerCase(), code);
});
// The spelling client-compat accepts for revocation requests.
REASON_CODES.set('affiliationchange', 3);

const invalid = (detail: string): ProblemError => new ProblemError('HTTP-003', { detail });

/** The CRLReason code of an RFC 5280 reason name (case-insensitive); another name is HTTP-003. */
export function reasonCode(reason: string): number {
  const code = REASON_CODES.get(reason.toLowerCase());
  if (code === undefined) throw invalid(`unknown revocation reason: ${reason}`);
  return code;
}

export const enumerated = (n: number): Uint8Array => tlv(TAG.ENUMERATED, Uint8Array.of(n));

/** Big-endian bytes of a lower-case (or upper-case) hex serial; odd lengths get a leading zero. */
export function serialBytes(serial: string): Uint8Array {
  const clean = serial.replace(/[:\s]/g, '');
  if (!/^[0-9a-fA-F]+$/.test(clean) || clean.length > 40) throw invalid(`not a serial number: ${JSON.stringify(serial)}`);
  return Buffer.from(clean.length % 2 ? `0${clean}` : clean, 'hex');
}

/** A non-negative integer (number, bigint or decimal text) as its big-endian magnitude. */
function magnitude(n: number | bigint | string): Uint8Array {
  let v: bigint;
  try {
    v = BigInt(n);
  } catch {
    throw invalid(`not a CRL number: ${String(n)}`);
  }
  if (v < 0n || v >= 1n << 159n) throw invalid(`CRL number out of range: ${String(n)}`);
  const hex = v.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

export interface CrlEntryInput {
  /** Serial, hex. */
  serial: string;
  /** Epoch ms. */
  revokedAt: number;
  /** RFC 5280 reason name; absent: no reasonCode extension. */
  reason?: string;
}

export interface CrlInput {
  entries: readonly CrlEntryInput[];
  /** Epoch ms (whole seconds are written). */
  thisUpdate: number;
  nextUpdate: number;
  /** cRLNumber: non-negative, at most 20 octets (RFC 5280 §5.2.3). */
  crlNumber: number | bigint | string;
}

const extension = (id: string, valueDer: Uint8Array): Uint8Array => seq(oid(id), octets(valueDer));

function validTime(ms: number, what: string): Uint8Array {
  try {
    return time(Math.floor(ms / 1000) * 1000);
  } catch {
    throw invalid(`${what} out of range`);
  }
}

/** The CRL (DER) of `ca` for `input`. */
export function buildCrl(ca: CaIdentity, input: CrlInput): Uint8Array {
  if (!(input.nextUpdate > input.thisUpdate)) throw invalid('nextUpdate must be after thisUpdate');
  const entries = input.entries.map((e) => {
    const fields = [unsignedInt(serialBytes(e.serial)), validTime(e.revokedAt, 'revocation date')];
    if (e.reason !== undefined && e.reason !== '') fields.push(seq(extension(EXTENSIONS.crlReason, enumerated(reasonCode(e.reason)))));
    return seq(...fields);
  });
  const tbs = seq(
    smallInt(1),
    ca.signer.algorithm,
    ca.name,
    validTime(input.thisUpdate, 'thisUpdate'),
    validTime(input.nextUpdate, 'nextUpdate'),
    // revokedCertificates is absent, not empty, when nothing is revoked (RFC 5280 §5.1.2.6).
    ...(entries.length ? [seq(...entries)] : []),
    explicit(0, seq(extension(EXTENSIONS.authorityKeyIdentifier, seq(implicit(0, ca.keyId))), extension(EXTENSIONS.crlNumber, unsignedInt(magnitude(input.crlNumber))))),
  );
  return seq(tbs, ca.signer.algorithm, bitString(ca.signer.sign(tbs)));
}
