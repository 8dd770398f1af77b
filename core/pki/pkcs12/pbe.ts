import { createDecipheriv, pbkdf2Sync } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { children, DerError, expectTag, readOid, readSmallInt, TAG, value, type Tlv } from '../der/reader.js';
import type { WorkBudget } from './budget.js';
import { KDF_ID, pkcs12Kdf } from './kdf.js';
import { rc2CbcDecrypt } from './rc2.js';

/** A password in the forms the schemes hash: BMPString for PKCS#12 PBE and MACs, raw UTF-8 for PBES2. */
export interface PasswordForms {
  bmp: Uint8Array;
  utf8: Uint8Array;
}

export type EncryptionKind = 'legacy' | 'modern';


/** PKCS#12 PBE algorithms (RFC 7292 App. C): key length, cipher, RC2 effective bits. RC4 is not offered. */
const PKCS12_PBE: Record<string, { name: string; keyLength: number; cipher: 'des-ede3-cbc' | 'des-ede-cbc' | 'rc2'; rc2Bits?: number }> = {
  '1.2.840.113549.1.12.1.3': { name: 'pbeWithSHA1And3-KeyTripleDES-CBC', keyLength: 24, cipher: 'des-ede3-cbc' },
  '1.2.840.113549.1.12.1.4': { name: 'pbeWithSHA1And2-KeyTripleDES-CBC', keyLength: 16, cipher: 'des-ede-cbc' },
  '1.2.840.113549.1.12.1.5': { name: 'pbeWithSHA1And128BitRC2-CBC', keyLength: 16, cipher: 'rc2', rc2Bits: 128 },
  '1.2.840.113549.1.12.1.6': { name: 'pbeWithSHA1And40BitRC2-CBC', keyLength: 5, cipher: 'rc2', rc2Bits: 40 },
};
const PBES2 = '1.2.840.113549.1.5.13';
const PBKDF2 = '1.2.840.113549.1.5.12';
const PRFS: Record<string, string> = {
  '1.2.840.113549.2.7': 'SHA1',
  '1.2.840.113549.2.8': 'SHA224',
  '1.2.840.113549.2.9': 'SHA256',
  '1.2.840.113549.2.10': 'SHA384',
  '1.2.840.113549.2.11': 'SHA512',
};
const PBES2_CIPHERS: Record<string, { name: string; keyLength: number; block: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16, block: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24, block: 16 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32, block: 16 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24, block: 8 },
};

export interface Decrypted {
  plain: Uint8Array;
  kind: EncryptionKind;
  /** Algorithm as `openssl pkcs12 -info` names it (pbeWithSHA1And40BitRC2-CBC, PBES2, PBKDF2, AES-256-CBC, PRF hmacWithSHA256…). */
  algorithm: string;
}

/** Decrypts `data` under the AlgorithmIdentifier at `alg`. Wrong password → PKI-003, unsupported → PKI-006. */
export function decryptPbe(buf: Uint8Array, alg: Tlv, data: Uint8Array, password: PasswordForms, budget: WorkBudget): Decrypted {
  const [oidTlv, params] = children(buf, expectTag(alg, TAG.SEQUENCE, 'encryption algorithm'));
  const oid = readOid(buf, oidTlv ?? alg);
  const legacy = PKCS12_PBE[oid];
  if (legacy) {
    const [salt, iterations] = children(buf, need(params, alg));
    const count = iterationCount(buf, iterations, alg);
    budget.kdfRounds(2 * count);
    const saltBytes = value(buf, expectTag(need(salt, alg), TAG.OCTET_STRING, 'salt'));
    wholeBlocks(data, 8, alg);
    const key = pkcs12Kdf('sha1', password.bmp, saltBytes, KDF_ID.key, count, legacy.keyLength);
    const iv = pkcs12Kdf('sha1', password.bmp, saltBytes, KDF_ID.iv, count, 8);
    const plain = legacy.cipher === 'rc2' ? unpad(rc2CbcDecrypt(key, legacy.rc2Bits!, iv, data)) : nodeDecrypt(legacy.cipher, key, iv, data);
    return { plain, kind: 'legacy', algorithm: legacy.name };
  }
  if (oid === PBES2) return pbes2(buf, need(params, alg), data, password, budget);
  throw new ProblemError('PKI-006', { detail: `encryption algorithm ${oid} is not supported` });
}

function pbes2(buf: Uint8Array, params: Tlv, data: Uint8Array, password: PasswordForms, budget: WorkBudget): Decrypted {
  const [kdf, scheme] = children(buf, params);
  const [kdfOid, kdfParams] = children(buf, need(kdf, params));
  if (readOid(buf, need(kdfOid, params)) !== PBKDF2) throw new ProblemError('PKI-006', { detail: 'PBES2 with a key derivation other than PBKDF2' });
  const [salt, iterations, ...rest] = children(buf, need(kdfParams, params));
  const saltBytes = value(buf, expectTag(need(salt, params), TAG.OCTET_STRING, 'PBKDF2 salt'));
  const count = iterationCount(buf, iterations, params);
  budget.pbkdf2Rounds(count);
  let prf = 'SHA1';
  for (const field of rest) {
    if (field.tag === TAG.SEQUENCE) {
      const prfOid = readOid(buf, need(children(buf, field)[0], field));
      const named = PRFS[prfOid];
      if (!named) throw new ProblemError('PKI-006', { detail: `PBKDF2 PRF ${prfOid} is not supported` });
      prf = named;
    }
  }
  const [cipherOid, ivTlv] = children(buf, need(scheme, params));
  const cipherId = readOid(buf, need(cipherOid, params));
  const cipher = PBES2_CIPHERS[cipherId];
  if (!cipher) throw new ProblemError('PKI-006', { detail: `PBES2 cipher ${cipherId} is not supported` });
  const iv = value(buf, expectTag(need(ivTlv, params), TAG.OCTET_STRING, 'IV'));
  if (iv.length !== cipher.block) throw new DerError(`IV of ${iv.length} bytes for ${cipher.name}`, ivTlv!.start);
  wholeBlocks(data, cipher.block, params);
  const key = pbkdf2Sync(password.utf8, saltBytes, count, cipher.keyLength, prf.toLowerCase());
  // Named as `openssl pkcs12 -info` prints it, less the iteration count.
  return { plain: nodeDecrypt(cipher.name, key, iv, data), kind: 'modern', algorithm: `PBES2, PBKDF2, ${cipher.name.toUpperCase()}, PRF hmacWith${prf}` };
}

export function iterationCount(buf: Uint8Array, tlv: Tlv | undefined, at: Tlv): number {
  const count = readSmallInt(buf, expectTag(need(tlv, at), TAG.INTEGER, 'iteration count'));
  if (count < 1) throw new DerError('iteration count below 1', at.start);
  return count;
}

/** Ciphertext that is not whole blocks is a broken file, not a wrong password. */
function wholeBlocks(data: Uint8Array, block: number, at: Tlv): void {
  if (data.length === 0 || data.length % block !== 0) throw new DerError(`ciphertext of ${data.length} bytes is not whole ${block}-byte blocks`, at.start);
}

function nodeDecrypt(cipher: string, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  try {
    const decipher = createDecipheriv(cipher, key, iv);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    // Bad padding is what a wrong key looks like (lengths were checked before).
    throw wrongPassword();
  }
}

/** PKCS#7 padding of a block cipher with 8-byte blocks. */
function unpad(plain: Uint8Array): Uint8Array {
  const n = plain[plain.length - 1]!;
  if (n < 1 || n > 8 || n > plain.length) throw wrongPassword();
  for (let i = plain.length - n; i < plain.length; i++) if (plain[i] !== n) throw wrongPassword();
  return plain.subarray(0, plain.length - n);
}

export const wrongPassword = (): ProblemError => new ProblemError('PKI-003');

function need(tlv: Tlv | undefined, parent: Tlv): Tlv {
  if (!tlv) throw new DerError('missing algorithm parameter', parent.start);
  return tlv;
}
