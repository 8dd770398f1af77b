import { createCipheriv, createDecipheriv, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Secrets of an export document sealed under a passphrase: a key derived by PBKDF2-SHA256, each secret
 * sealed with AES-256-GCM, its AAD naming where it belongs (`<type>/<name>/<path>`) so a sealed value
 * moved to another object or field does not open. Independent of the instance's own master key: the
 * document is meant to be opened by another instance.
 */

export const SEALED_PREFIX = '$sealed:';
/** OWASP's 2023 figure for PBKDF2-HMAC-SHA256. */
export const PBKDF2_ITERATIONS = 310_000;
/** An imported document chooses its own count: bounded so a crafted document cannot pin the CPU. */
export const MAX_PBKDF2_ITERATIONS = 10_000_000;
export const MIN_PASSPHRASE_LENGTH = 12;

export interface SealParams {
  kdf: 'pbkdf2-sha256';
  iterations: number;
  /** 16 random bytes, base64url. */
  salt: string;
  cipher: 'aes-256-gcm';
}

const derive = promisify(pbkdf2);

/** The key of `params` (async: 310,000 iterations take a few hundred milliseconds). */
export async function deriveKey(passphrase: string, params: SealParams): Promise<Buffer> {
  return derive(passphrase.normalize('NFC'), Buffer.from(params.salt, 'base64url'), params.iterations, 32, 'sha256');
}

/** Fresh parameters (a new salt) and their key, for one export. */
export async function newSealing(passphrase: string): Promise<{ params: SealParams; key: Buffer }> {
  const params: SealParams = { kdf: 'pbkdf2-sha256', iterations: PBKDF2_ITERATIONS, salt: randomBytes(16).toString('base64url'), cipher: 'aes-256-gcm' };
  return { params, key: await deriveKey(passphrase, params) };
}

export const isSealed = (value: unknown): value is string => typeof value === 'string' && value.startsWith(SEALED_PREFIX);

export function seal(key: Buffer, aad: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${SEALED_PREFIX}${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

/** The plaintext, or null when the value does not open (wrong passphrase, altered, moved or malformed). */
export function open(key: Buffer, aad: string, sealed: string): string | null {
  const parts = sealed.slice(SEALED_PREFIX.length).split('.');
  if (parts.length !== 3) return null;
  const [iv, ciphertext, tag] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
  if (iv.length !== 12 || tag.length !== 16) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** Where a sealed secret belongs: its type, object and field. */
export const secretAad = (type: string, name: string, path: string): string => `${type}/${name}/${path}`;
