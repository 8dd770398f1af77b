import { ProblemError } from '../../errors/index.js';
import { isCertificateType, md5Fingerprint, plainTypeOf, readKeyFields, readPublicBlob, sha256Fingerprint, sshString } from './keys.js';
import { verifySshSignature } from './signature.js';
import { packedStrings, SshReader } from './wire.js';

/** A critical option or extension: its name and value ('' for flags such as permit-pty). */
export interface SshCertificateOption {
  name: string;
  value: string;
}

export interface SshCertificateInfo {
  kind: 'certificate';
  /** The certificate type (ssh-ed25519-cert-v01@openssh.com, …). */
  type: string;
  keyType: string;
  bits: number;
  comment: string | null;
  /** Fingerprints of the certified key (what ssh-keygen -l and -L print for a certificate). */
  fingerprint: string;
  md5Fingerprint: string;
  /** uint64 in decimal, as ssh-keygen -L prints it (it may exceed JavaScript's safe integers). */
  serial: string;
  keyId: string;
  certType: 'user' | 'host';
  /** Empty: valid for any principal. */
  principals: string[];
  /** Epoch ms; null for "always" (0) and "forever" (2^64 − 1). */
  validAfter: number | null;
  validBefore: number | null;
  criticalOptions: SshCertificateOption[];
  extensions: SshCertificateOption[];
  signatureKey: { type: string; keyType: string; fingerprint: string };
  /** The signature format (ssh-ed25519, rsa-sha2-512, ecdsa-sha2-nistp256, …). */
  signatureAlgorithm: string;
  /** Null when the CA key type is not verified here (DSA, security keys). */
  signatureValid: boolean | null;
}

const FOREVER = 0xffffffffffffffffn;
/** Beyond this many seconds a Date is invalid (year 275760); treat it as no bound. */
const MAX_SECONDS = 8_640_000_000_000n;

const when = (seconds: bigint): number | null => (seconds === 0n || seconds === FOREVER || seconds > MAX_SECONDS ? null : Number(seconds) * 1000);

/**
 * Options and extensions are (name, data) pairs; for the standard ones data is itself a string
 * (force-command, source-address) or empty (flags). Other data is shown as base64.
 */
function options(data: Uint8Array, what: string): SshCertificateOption[] {
  const fields = packedStrings(data, what);
  if (fields.length % 2) throw new ProblemError('PKI-001', { detail: `${what}: a name without its value` });
  const out: SshCertificateOption[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const raw = fields[i + 1]!;
    let value = '';
    if (raw.length > 0) {
      const inner = new SshReader(raw, what);
      const len = raw.length >= 4 ? inner.uint32() : -1;
      value = len === raw.length - 4 ? Buffer.from(raw.subarray(4)).toString('utf8') : Buffer.from(raw).toString('base64');
    }
    out.push({ name: Buffer.from(fields[i]!).toString('utf8'), value });
  }
  return out;
}

/** A certificate blob (PROTOCOL.certkeys): the certified key, its constraints, the CA key and signature. */
export function decodeSshCertificate(blob: Uint8Array, comment: string | null): SshCertificateInfo {
  const reader = new SshReader(blob, 'certificate');
  const type = reader.text();
  if (!isCertificateType(type)) reader.fail(`${type} is not a certificate type`);
  reader.string(); // nonce
  const plainType = plainTypeOf(type);
  const fieldsStart = reader.offset;
  const key = readKeyFields(reader, plainType);
  // The certified key's own blob, for its fingerprints: its type followed by the same fields.
  const plainBlob = Buffer.concat([sshString(plainType), blob.subarray(fieldsStart, reader.offset)]);
  const serial = reader.uint64();
  const kind = reader.uint32();
  if (kind !== 1 && kind !== 2) reader.fail(`certificate type ${kind} is neither user (1) nor host (2)`);
  const keyId = reader.text();
  const principals = packedStrings(reader.string(), 'principals').map((p) => Buffer.from(p).toString('utf8'));
  const validAfter = reader.uint64();
  const validBefore = reader.uint64();
  const criticalOptions = options(reader.string(), 'critical options');
  const extensions = options(reader.string(), 'extensions');
  reader.string(); // reserved
  const signatureKeyBlob = reader.string();
  const signed = blob.subarray(0, reader.offset);
  const signature = reader.string();
  reader.end();
  const caKey = readPublicBlob(signatureKeyBlob, 'signature key');
  const check = verifySshSignature(caKey, signature, signed);
  return {
    kind: 'certificate',
    type,
    keyType: key.keyType,
    bits: key.bits,
    comment,
    fingerprint: sha256Fingerprint(plainBlob),
    md5Fingerprint: md5Fingerprint(plainBlob),
    serial: serial.toString(),
    keyId,
    certType: kind === 1 ? 'user' : 'host',
    principals,
    validAfter: when(validAfter),
    validBefore: when(validBefore),
    criticalOptions,
    extensions,
    signatureKey: { type: caKey.type, keyType: caKey.keyType, fingerprint: sha256Fingerprint(signatureKeyBlob) },
    signatureAlgorithm: check.format,
    signatureValid: check.valid,
  };
}
