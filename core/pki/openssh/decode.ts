import { ProblemError } from '../../errors/index.js';
import { decodeParam, fromBase64, pemBlocks } from '../input.js';
import { decodeSshCertificate, type SshCertificateInfo } from './certificate.js';
import { isCertificateType, md5Fingerprint, readPublicBlob, sha256Fingerprint } from './keys.js';
import { decodeSshPrivateKey, OPENSSH_KEY_MAGIC, type SshPrivateKeyInfo } from './private-key.js';

export type { SshCertificateInfo } from './certificate.js';
export type { SshPrivateKeyInfo } from './private-key.js';

export interface SshPublicKeyInfo {
  kind: 'publicKey';
  type: string;
  keyType: string;
  bits: number;
  comment: string | null;
  /** SHA256:…, as ssh-keygen -l prints it. */
  fingerprint: string;
  /** MD5:aa:bb:…, as ssh-keygen -l -E md5 prints it. */
  md5Fingerprint: string;
}

export type OpenSshInfo = SshPublicKeyInfo | SshCertificateInfo | SshPrivateKeyInfo;

/** SSH objects are small (a 16384-bit RSA certificate is ~5 KB); anything much larger is refused. */
export const MAX_SSH_BYTES = 256 * 1024;

/** The first token of a key line: every OpenSSH key and certificate type starts so. */
const KEY_TYPE = /^(ssh-|ecdsa-sha2-|sk-)[A-Za-z0-9@.-]+$/;
const RFC4716 = /---- BEGIN SSH2 PUBLIC KEY ----([\s\S]*?)---- END SSH2 PUBLIC KEY ----/;

/** A public key or certificate blob: what follows is decided by its type string. */
function decodeBlob(blob: Uint8Array, comment: string | null): SshPublicKeyInfo | SshCertificateInfo {
  const typeLength = blob.length >= 4 ? Buffer.from(blob).readUInt32BE(0) : 0;
  const type = Buffer.from(blob.subarray(4, 4 + Math.min(typeLength, 128))).toString('latin1');
  if (isCertificateType(type)) return decodeSshCertificate(blob, comment);
  const key = readPublicBlob(blob);
  return { kind: 'publicKey', type: key.type, keyType: key.keyType, bits: key.bits, comment, fingerprint: sha256Fingerprint(blob), md5Fingerprint: md5Fingerprint(blob) };
}

/** Does the blob start like a wire-format key (uint32 length, then a type name)? */
function looksLikeBlob(bytes: Uint8Array): boolean {
  if (bytes.length < 11) return false;
  const length = Buffer.from(bytes).readUInt32BE(0);
  if (length < 7 || length > 64 || bytes.length < 4 + length) return false;
  return KEY_TYPE.test(Buffer.from(bytes.subarray(4, 4 + length)).toString('latin1'));
}

/** RFC 4716 (ssh-keygen -e): Header: value lines (continued by a trailing \), then base64. */
function decodeRfc4716(body: string): SshPublicKeyInfo | SshCertificateInfo {
  const lines = body.replace(/\\\r?\n/g, '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  let comment: string | null = null;
  const data: string[] = [];
  for (const line of lines) {
    const header = /^([\x21-\x39\x3b-\x7e]{1,64}):\s*(.*)$/.exec(line);
    if (header) {
      if (header[1]!.toLowerCase() === 'comment') comment = header[2]!.replace(/^"(.*)"$/, '$1');
    } else data.push(line);
  }
  const blob = fromBase64(data.join(''));
  if (!blob) throw new ProblemError('PKI-001', { detail: 'the SSH2 public key block is not base64' });
  return decodeBlob(blob, comment);
}

/**
 * An authorized_keys / .pub line: [options] type base64 [comment]. The type named by the line must be
 * the blob's own (ssh-keygen refuses a mismatch too). Null when no token looks like a key type.
 */
function decodeKeyLine(text: string): SshPublicKeyInfo | SshCertificateInfo | null {
  const line = text.split(/\r?\n/).map((l) => l.trim()).find((l) => l.length > 0 && !l.startsWith('#'));
  if (!line) return null;
  const tokens = line.split(/\s+/);
  const at = tokens.findIndex((token, i) => KEY_TYPE.test(token) && i + 1 < tokens.length);
  if (at < 0) return null;
  const blob = fromBase64(tokens[at + 1]!);
  if (!blob) throw new ProblemError('PKI-001', { detail: `the ${tokens[at]} key is not base64` });
  const info = decodeBlob(blob, tokens.slice(at + 2).join(' ') || null);
  if (info.type !== tokens[at]) throw new ProblemError('PKI-001', { detail: `the line says ${tokens[at]}, the key is ${info.type}` });
  return info;
}

function decodeText(raw: string, depth: number): OpenSshInfo {
  const text = decodeParam(raw.trim());
  if (text.includes('-----BEGIN')) {
    const [block] = pemBlocks(text);
    if (!block) throw new ProblemError('PKI-001', { detail: 'no complete PEM block' });
    if (block.label !== 'OPENSSH PRIVATE KEY') throw new ProblemError('PKI-002', { detail: `a ${block.label}, not an OpenSSH key` });
    return decodeSshPrivateKey(block.der);
  }
  const rfc4716 = RFC4716.exec(text);
  if (rfc4716) return decodeRfc4716(rfc4716[1]!);
  const line = decodeKeyLine(text);
  if (line) return line;
  // A bare base64 blob (or base64 of a key file, as GET /api/v1/openssh/:base64 carries it).
  const bytes = depth === 0 ? fromBase64(text) : null;
  if (bytes) return decodeBytes(bytes, depth + 1);
  throw new ProblemError('PKI-001', { detail: 'neither an OpenSSH public key, certificate nor private key' });
}

function decodeBytes(bytes: Uint8Array, depth: number): OpenSshInfo {
  if (Buffer.from(bytes.subarray(0, OPENSSH_KEY_MAGIC.length)).equals(OPENSSH_KEY_MAGIC)) return decodeSshPrivateKey(bytes);
  if (looksLikeBlob(bytes)) return decodeBlob(bytes, null);
  if (bytes[0] === 0x30) throw new ProblemError('PKI-002', { detail: 'DER (an X.509 or PKCS object), not an OpenSSH key' });
  return decodeText(Buffer.from(bytes).toString('utf8'), depth);
}

/**
 * Any OpenSSH object: a public key or certificate line (.pub, authorized_keys, RFC 4716), a private key
 * file, a bare wire blob, or base64 of any of these. Private key material is never returned.
 */
export function decodeOpenSsh(input: string | Uint8Array): OpenSshInfo {
  if (input.length > MAX_SSH_BYTES) throw new ProblemError('PKI-004', { detail: `more than ${MAX_SSH_BYTES} bytes` });
  if (input.length === 0) throw new ProblemError('PKI-001', { detail: 'empty input' });
  return typeof input === 'string' ? decodeText(input, 0) : decodeBytes(input, 0);
}
