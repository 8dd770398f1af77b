/**
 * Key generation by the request templates' key type names (client-compat §2.3): RSA with e = 65537,
 * ECDSA on the named NIST curves, Ed25519. Keys stay KeyObjects; callers export what they store.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';

export const KEY_TYPE_NAMES = ['rsa-2048', 'rsa-3072', 'rsa-4096', 'ec-secp256r1', 'ec-secp384r1', 'ec-secp521r1', 'ed-25519'] as const;
export type KeyTypeName = (typeof KEY_TYPE_NAMES)[number];

const EC_CURVES: Record<string, string> = { 'ec-secp256r1': 'prime256v1', 'ec-secp384r1': 'secp384r1', 'ec-secp521r1': 'secp521r1' };

export const isKeyTypeName = (name: string): name is KeyTypeName => (KEY_TYPE_NAMES as readonly string[]).includes(name);

/** A new key pair of `type`; another name is PKI-006. */
export function generateKey(type: string): { privateKey: KeyObject; publicKey: KeyObject } {
  if (type.startsWith('rsa-') && isKeyTypeName(type)) return generateKeyPairSync('rsa', { modulusLength: Number(type.slice(4)), publicExponent: 0x10001 });
  const curve = EC_CURVES[type];
  if (curve) return generateKeyPairSync('ec', { namedCurve: curve });
  if (type === 'ed-25519') return generateKeyPairSync('ed25519');
  throw new ProblemError('PKI-006', { detail: `unknown key type ${JSON.stringify(type)} (one of ${KEY_TYPE_NAMES.join(', ')})` });
}

/** PKCS#8 and SPKI PEM of a new key pair. */
export function generateKeyPem(type: string): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKey(type);
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
  };
}
