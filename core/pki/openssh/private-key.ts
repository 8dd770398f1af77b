import { ProblemError } from '../../errors/index.js';
import { md5Fingerprint, readPublicBlob, sha256Fingerprint } from './keys.js';
import { SshReader } from './wire.js';

/** What a private key file tells without its secret: never any private key material. */
export interface SshPrivateKeyInfo {
  kind: 'privateKey';
  type: string;
  keyType: string;
  bits: number;
  /** Fingerprints of the public half, stored in the clear in the file. */
  fingerprint: string;
  md5Fingerprint: string;
  encrypted: boolean;
  /** none, aes256-ctr, chacha20-poly1305@openssh.com, … */
  cipher: string;
  /** none or bcrypt. */
  kdf: string;
  /** bcrypt rounds (ssh-keygen -a). */
  rounds?: number;
  /** Only readable when the key is not encrypted. */
  comment?: string;
}

export const OPENSSH_KEY_MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');

/**
 * Skips one key's private fields (PROTOCOL.key, per key type as sshkey_private_serialize writes them) to
 * reach its comment. Returns false for a type whose layout is not known here (then no comment).
 */
function skipPrivateFields(reader: SshReader, type: string): boolean {
  const mpints = (n: number) => {
    for (let i = 0; i < n; i++) reader.mpint();
  };
  if (type === 'ssh-ed25519') {
    reader.string();
    reader.string();
  } else if (type === 'ssh-rsa') mpints(6);
  else if (type === 'ssh-dss') mpints(5);
  else if (type.startsWith('ecdsa-sha2-')) {
    reader.string();
    reader.string();
    reader.mpint();
  } else if (type === 'sk-ssh-ed25519@openssh.com' || type === 'sk-ecdsa-sha2-nistp256@openssh.com') {
    reader.string();
    if (type.startsWith('sk-ecdsa')) reader.string();
    reader.string(); // application
    reader.bytes(1); // flags
    reader.string(); // key handle
    reader.string(); // reserved
  } else return false;
  return true;
}

/** An "openssh-key-v1" private key file's binary body (the base64 inside the PEM-like armour). */
export function decodeSshPrivateKey(body: Uint8Array): SshPrivateKeyInfo {
  if (!Buffer.from(body.subarray(0, OPENSSH_KEY_MAGIC.length)).equals(OPENSSH_KEY_MAGIC)) {
    throw new ProblemError('PKI-002', { detail: 'not an openssh-key-v1 private key' });
  }
  const reader = new SshReader(body.subarray(OPENSSH_KEY_MAGIC.length), 'private key');
  const cipher = reader.text();
  const kdf = reader.text();
  const kdfOptions = reader.string();
  const count = reader.uint32();
  // ssh-keygen writes one key per file; several would need a list answer no client expects.
  if (count !== 1) reader.fail(`${count} keys in one file (expected 1)`);
  const publicBlob = reader.string();
  const privateSection = reader.string();
  reader.end();
  const key = readPublicBlob(publicBlob);
  const info: SshPrivateKeyInfo = {
    kind: 'privateKey',
    type: key.type,
    keyType: key.keyType,
    bits: key.bits,
    fingerprint: sha256Fingerprint(publicBlob),
    md5Fingerprint: md5Fingerprint(publicBlob),
    encrypted: cipher !== 'none',
    cipher,
    kdf,
  };
  if (kdf === 'bcrypt') {
    const options = new SshReader(kdfOptions, 'kdf options');
    options.string(); // salt
    info.rounds = options.uint32();
    options.end();
  }
  if (info.encrypted) return info;
  if (kdf !== 'none') reader.fail(`kdf ${kdf} without a cipher`);
  const secret = new SshReader(privateSection, 'private key');
  // Equal check integers are how ssh-keygen tells a correct decryption; unencrypted they must match too.
  if (secret.uint32() !== secret.uint32()) secret.fail('check integers differ (corrupt key)');
  const type = secret.text();
  if (type !== key.type) secret.fail(`private key of type ${type} beside a ${key.type} public key`);
  if (skipPrivateFields(secret, type)) info.comment = secret.text();
  return info;
}
