/**
 * Content encryption of SCEP envelopes. AES and 3DES go through node:crypto; single DES is not in OpenSSL
 * 3's default provider (it needs --openssl-legacy-provider), yet scepclient always uses it, so that one
 * cipher goes through node-forge's pure-JS DES. CBC padding is removed here for both paths, so a wrong key
 * fails the same way (null) whichever library decrypted.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import forge from 'node-forge';
import { CIPHERS, type ContentCipher } from './algorithms.js';

const binary = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('binary');

function pkcs7Pad(data: Uint8Array, block: number): Uint8Array {
  const n = block - (data.length % block);
  const out = new Uint8Array(data.length + n);
  out.set(data);
  out.fill(n, data.length);
  return out;
}

/** The data without its PKCS#7 padding, or null when the padding is wrong. */
function pkcs7Unpad(data: Uint8Array, block: number): Uint8Array | null {
  if (data.length === 0 || data.length % block) return null;
  const n = data[data.length - 1]!;
  let bad = n === 0 || n > block ? 1 : 0;
  for (let i = 1; i <= block; i++) bad |= (i <= n ? 1 : 0) & (data[data.length - i] !== n ? 1 : 0);
  return bad ? null : data.subarray(0, data.length - n);
}

function desCbc(encrypt: boolean, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  const c = encrypt ? forge.cipher.createCipher('DES-CBC', binary(key)) : forge.cipher.createDecipher('DES-CBC', binary(key));
  c.start({ iv: binary(iv) });
  c.update(forge.util.createBuffer(binary(data)));
  // finish(pad) with a pad function that does nothing: the callers pad and check padding themselves.
  (c as unknown as { finish(pad: () => boolean): boolean }).finish(() => true);
  return Buffer.from(c.output.getBytes(), 'binary');
}

function nodeCbc(cipher: ContentCipher, encrypt: boolean, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  const c = encrypt ? createCipheriv(cipher, key, iv) : createDecipheriv(cipher, key, iv);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
}

/** CBC encryption with PKCS#7 padding. */
export function encryptCbc(cipher: ContentCipher, key: Uint8Array, iv: Uint8Array, plaintext: Uint8Array): Uint8Array {
  const spec = CIPHERS[cipher];
  const padded = pkcs7Pad(plaintext, spec.ivLength);
  return cipher === 'des-cbc' ? desCbc(true, key, iv, padded) : nodeCbc(cipher, true, key, iv, padded);
}

/** CBC decryption; null when the ciphertext length or the padding is wrong (a wrong key, most often). */
export function decryptCbc(cipher: ContentCipher, key: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array): Uint8Array | null {
  const spec = CIPHERS[cipher];
  if (iv.length !== spec.ivLength || ciphertext.length === 0 || ciphertext.length % spec.ivLength) return null;
  const padded = cipher === 'des-cbc' ? desCbc(false, key, iv, ciphertext) : nodeCbc(cipher, false, key, iv, ciphertext);
  return pkcs7Unpad(padded, spec.ivLength);
}

/** AES-GCM (AuthEnvelopedData, RFC 5083/5084); null when the tag does not verify. */
export function decryptGcm(cipher: ContentCipher, key: Uint8Array, nonce: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array, aad?: Uint8Array): Uint8Array | null {
  try {
    const d = createDecipheriv(cipher as 'aes-256-gcm', key, nonce, { authTagLength: tag.length });
    d.setAuthTag(tag);
    if (aad) d.setAAD(aad);
    return Buffer.concat([d.update(ciphertext), d.final()]);
  } catch {
    return null;
  }
}
