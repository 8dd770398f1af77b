import { createHash, type JsonWebKey } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { bitLength, SshReader } from './wire.js';

/** ssh-keygen refuses RSA moduli above this (OPENSSH_RSA_MAX_MODULUS_SIZE); so do we, bounding work. */
export const MAX_RSA_BITS = 16384;

/** The ECDSA curves OpenSSH knows, by their wire name (RFC 5656 §10.1). */
export const SSH_CURVES: Record<string, { curve: string; jwk: string; size: number; bits: number; hash: string }> = {
  nistp256: { curve: 'secp256r1', jwk: 'P-256', size: 32, bits: 256, hash: 'sha256' },
  nistp384: { curve: 'secp384r1', jwk: 'P-384', size: 48, bits: 384, hash: 'sha384' },
  nistp521: { curve: 'secp521r1', jwk: 'P-521', size: 66, bits: 521, hash: 'sha512' },
};

/** A public key as read off the wire: enough to name it and, where Node can, to verify with it. */
export interface SshKeyMaterial {
  /** Plain key type (ssh-rsa, ecdsa-sha2-nistp256, ssh-ed25519, sk-ssh-ed25519@openssh.com, …). */
  type: string;
  /** rsa-2048, ec-secp256r1, ed-25519, dsa-1024 (the certificate model's naming). */
  keyType: string;
  /** What ssh-keygen -l prints first. */
  bits: number;
  /** For signature checks; null for DSA and security keys, which are not verified here. */
  jwk: JsonWebKey | null;
}

const CERT_SUFFIX = '-cert-v01@openssh.com';

export const isCertificateType = (type: string): boolean => type.endsWith(CERT_SUFFIX);

/** ssh-ed25519-cert-v01@openssh.com → ssh-ed25519; sk-ssh-ed25519-cert-v01@openssh.com → sk-ssh-ed25519@openssh.com. */
export function plainTypeOf(certType: string): string {
  const base = certType.slice(0, -CERT_SUFFIX.length);
  return base.startsWith('sk-') ? `${base}@openssh.com` : base;
}

const b64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64url');

function ecdsaPoint(reader: SshReader, wireCurve: string, expected: string): { curve: (typeof SSH_CURVES)[string]; point: Uint8Array } {
  const curve = SSH_CURVES[expected];
  if (!curve) throw new ProblemError('PKI-006', { detail: `unknown ECDSA curve ${expected}` });
  if (wireCurve !== expected) reader.fail(`curve ${wireCurve} does not match the key type's ${expected}`);
  const point = reader.string();
  // Uncompressed points only (04 || X || Y), as OpenSSH writes them.
  if (point.length !== 1 + 2 * curve.size || point[0] !== 4) reader.fail(`not an uncompressed ${expected} point`);
  return { curve, point };
}

const ecJwk = (crv: string, point: Uint8Array, size: number): JsonWebKey => ({
  kty: 'EC',
  crv,
  x: b64url(point.subarray(1, 1 + size)),
  y: b64url(point.subarray(1 + size)),
});

/**
 * Reads the key-specific fields that follow the type string, in a plain key blob or a certificate
 * (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4, PROTOCOL.u2f). Unknown types are PKI-006.
 */
export function readKeyFields(reader: SshReader, type: string): SshKeyMaterial {
  if (type === 'ssh-rsa') {
    const e = reader.mpint();
    const n = reader.mpint();
    const bits = bitLength(n);
    if (bits === 0 || e.length === 0) reader.fail('empty RSA modulus or exponent');
    if (bits > MAX_RSA_BITS) throw new ProblemError('PKI-004', { detail: `RSA modulus of ${bits} bits (at most ${MAX_RSA_BITS})` });
    return { type, keyType: `rsa-${bits}`, bits, jwk: { kty: 'RSA', n: b64url(n), e: b64url(e) } };
  }
  if (type === 'ssh-dss') {
    const p = reader.mpint();
    reader.mpint();
    reader.mpint();
    reader.mpint();
    const bits = bitLength(p);
    return { type, keyType: `dsa-${bits}`, bits, jwk: null };
  }
  if (type.startsWith('ecdsa-sha2-')) {
    const name = type.slice('ecdsa-sha2-'.length);
    const { curve, point } = ecdsaPoint(reader, reader.text(), name);
    return { type, keyType: `ec-${curve.curve}`, bits: curve.bits, jwk: ecJwk(curve.jwk, point, curve.size) };
  }
  if (type === 'ssh-ed25519') {
    const pk = reader.string();
    if (pk.length !== 32) reader.fail('Ed25519 key is not 32 bytes');
    return { type, keyType: 'ed-25519', bits: 256, jwk: { kty: 'OKP', crv: 'Ed25519', x: b64url(pk) } };
  }
  if (type === 'sk-ecdsa-sha2-nistp256@openssh.com') {
    const { curve } = ecdsaPoint(reader, reader.text(), 'nistp256');
    reader.text(); // application ("ssh:")
    return { type, keyType: `ec-${curve.curve}`, bits: curve.bits, jwk: null };
  }
  if (type === 'sk-ssh-ed25519@openssh.com') {
    if (reader.string().length !== 32) reader.fail('Ed25519 key is not 32 bytes');
    reader.text(); // application
    return { type, keyType: 'ed-25519', bits: 256, jwk: null };
  }
  throw new ProblemError('PKI-006', { detail: `unknown SSH key type ${JSON.stringify(type.slice(0, 64))}` });
}

/** A whole plain public key blob (string type + fields, nothing after). */
export function readPublicBlob(blob: Uint8Array, what = 'public key'): SshKeyMaterial {
  const reader = new SshReader(blob, what);
  const material = readKeyFields(reader, reader.text());
  reader.end();
  return material;
}

/** `SHA256:<base64 without padding>`, as ssh-keygen -l prints it. */
export const sha256Fingerprint = (blob: Uint8Array): string => `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

/** `MD5:aa:bb:…`, as ssh-keygen -l -E md5 prints it. */
export const md5Fingerprint = (blob: Uint8Array): string => `MD5:${createHash('md5').update(blob).digest('hex').replace(/(..)(?!$)/g, '$1:')}`;

/** The SSH string encoding (uint32 length + bytes). */
export function sshString(bytes: Uint8Array | string): Buffer {
  const body = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}
