// AES-256-GCM sealing of secrets stored at rest (connector passwords, API
// tokens). Format: cw1.<keyId>.<iv>.<ciphertext>.<tag>, fields base64url.

import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeBase64Url } from './base64.js';
import { keyId as computeKeyId, MASTER_KEY_BYTES } from './master-key.js';

const PREFIX = 'cw1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[0-9a-f]{16}$/;

export class SecretDecryptError extends Error {
  override readonly name = 'SecretDecryptError';
  readonly code = 'SECRET-001';
}

export class SecretBox {
  readonly keyId: string;
  readonly #key: KeyObject;

  constructor(key: Buffer) {
    if (!Buffer.isBuffer(key) || key.length !== MASTER_KEY_BYTES) {
      const got = Buffer.isBuffer(key) ? `${key.length} bytes` : typeof key;
      throw new RangeError(`SecretBox key must be exactly ${MASTER_KEY_BYTES} bytes (got ${got})`);
    }
    // createSecretKey copies the bytes; one KeyObject is reused for every call.
    this.#key = createSecretKey(key);
    this.keyId = computeKeyId(key);
  }

  /**
   * A key for another purpose (session signing, cache keys), derived from the master key with HKDF so
   * every node sharing the master key derives the same one and the master key itself is used only here.
   */
  deriveKey(purpose: string, bytes = 32): Buffer {
    return Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `certwright:${purpose}`, bytes));
  }

  /**
   * `aad` names where the value is stored (e.g. "pki_connectors.password") so
   * a ciphertext copied to another column fails to open. An empty aad is
   * equivalent to none (GCM semantics).
   */
  seal(plaintext: string | Buffer, aad?: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
    if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
    const input = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
    const ciphertext = Buffer.concat([cipher.update(input), cipher.final()]);
    // Wipe our own copy of the plaintext; the caller owns a Buffer argument.
    if (input !== plaintext) input.fill(0);
    const tag = cipher.getAuthTag();
    return [PREFIX, this.keyId, iv, ciphertext, tag]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  open(sealed: string, aad?: string): Buffer {
    const { iv, ciphertext, tag } = this.#parse(sealed);
    try {
      const decipher = createDecipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      // GCM cannot tell tampering from a wrong aad; the cause adds nothing.
      throw new SecretDecryptError(
        'sealed secret failed authentication: it was modified, or is being opened with different associated data (wrong column?)',
      );
    }
  }

  openString(sealed: string, aad?: string): string {
    const bytes = this.open(sealed, aad);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new SecretDecryptError('sealed secret is binary data, not UTF-8 text');
    } finally {
      bytes.fill(0);
    }
  }

  #parse(sealed: string): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
    if (typeof sealed !== 'string') {
      throw new SecretDecryptError(`sealed secret must be a string, got ${typeof sealed}`);
    }
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== PREFIX) {
      throw new SecretDecryptError(`malformed sealed secret: expected ${PREFIX}.<keyId>.<iv>.<ciphertext>.<tag>`);
    }
    const [, id, ivText, ctText, tagText] = parts as [string, string, string, string, string];
    if (!KEY_ID.test(id)) throw new SecretDecryptError('malformed sealed secret: bad key id');
    if (id !== this.keyId) {
      throw new SecretDecryptError(
        `sealed under another master key (key id ${id}); the current master key is ${this.keyId}`,
      );
    }
    const iv = decodeBase64Url(ivText);
    const ciphertext = decodeBase64Url(ctText);
    const tag = decodeBase64Url(tagText);
    if (!iv || iv.length !== IV_BYTES || !ciphertext || !tag || tag.length !== TAG_BYTES) {
      throw new SecretDecryptError('malformed sealed secret: bad iv, ciphertext or tag encoding');
    }
    return { iv, ciphertext, tag };
  }
}
