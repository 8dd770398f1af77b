/**
 * Horizon's `cryptoPolicy` (ManagedCertificateProfileCryptoPolicy) ⇄ Certwright's `keyPolicy`. Same names but
 * two: p12passwordMode `random` is Certwright's `generated`, p12passwordPolicy is keyPolicy.passwordPolicy.
 * Horizon leaves defaultKeyType and preferredEnrollmentMode optional: when a client leaves them out and the
 * stored ones no longer fit (a key type no longer authorized, a mode disabled), the first that fits is taken.
 *
 * Horizon-only settings:
 * - showP12OnRecover, showP12PasswordOnRecover: display hints like showP12OnEnroll: stored, answered back.
 * - p12storeEncryptionType: Certwright writes PKCS#12 with PBES2 / AES-256 only: answered `AES`, others refused.
 * - keyAvailability: Certwright has no such setting (a request's key is kept as the request needs it): refused.
 */
import type { KeyPolicy, KeyTypeName } from '../types.js';
import { only, type Json } from './common.js';

export function cryptoPolicyOf(k: KeyPolicy): Json {
  return {
    authorizedKeyTypes: [...k.authorizedKeyTypes],
    centralized: k.centralized,
    decentralized: k.decentralized,
    defaultKeyType: k.defaultKeyType,
    escrow: k.escrow,
    p12passwordMode: k.p12passwordMode === 'manual' ? 'manual' : 'random',
    ...(k.passwordPolicy !== undefined ? { p12passwordPolicy: k.passwordPolicy } : {}),
    p12storeEncryptionType: 'AES',
    preferredEnrollmentMode: k.preferredEnrollmentMode,
    showP12OnEnroll: k.showP12OnEnroll,
    showP12PasswordOnEnroll: k.showP12PasswordOnEnroll,
    ...(k.showP12OnRecover !== undefined ? { showP12OnRecover: k.showP12OnRecover } : {}),
    ...(k.showP12PasswordOnRecover !== undefined ? { showP12PasswordOnRecover: k.showP12PasswordOnRecover } : {}),
  };
}

const FLAGS = ['centralized', 'decentralized', 'escrow', 'showP12OnEnroll', 'showP12PasswordOnEnroll', 'showP12OnRecover', 'showP12PasswordOnRecover'] as const;

export function applyCryptoPolicy(sent: Json, current: KeyPolicy): KeyPolicy {
  only('cryptoPolicy.p12storeEncryptionType', typeof sent.p12storeEncryptionType === 'string' ? sent.p12storeEncryptionType.toUpperCase() : sent.p12storeEncryptionType, 'AES', 'Certwright writes PKCS#12 files with AES-256 (PBES2) only');
  only('cryptoPolicy.keyAvailability', sent.keyAvailability, undefined, 'Certwright has no key availability setting');
  const k: KeyPolicy = { ...current };
  if (Array.isArray(sent.authorizedKeyTypes)) k.authorizedKeyTypes = [...(sent.authorizedKeyTypes as KeyTypeName[])];
  for (const flag of FLAGS) if (typeof sent[flag] === 'boolean') k[flag] = sent[flag] as boolean;
  if (typeof sent.defaultKeyType === 'string') k.defaultKeyType = sent.defaultKeyType as KeyTypeName;
  else if (!k.authorizedKeyTypes.includes(k.defaultKeyType) && k.authorizedKeyTypes.length > 0) k.defaultKeyType = k.authorizedKeyTypes[0]!;
  if (sent.preferredEnrollmentMode === 'centralized' || sent.preferredEnrollmentMode === 'decentralized') k.preferredEnrollmentMode = sent.preferredEnrollmentMode;
  else if (!k[k.preferredEnrollmentMode]) k.preferredEnrollmentMode = k.preferredEnrollmentMode === 'centralized' ? 'decentralized' : 'centralized';
  if (sent.p12passwordMode === 'manual') k.p12passwordMode = 'manual';
  else if (sent.p12passwordMode === 'random' || sent.p12passwordMode === 'generated') k.p12passwordMode = 'generated';
  if (typeof sent.p12passwordPolicy === 'string') k.passwordPolicy = sent.p12passwordPolicy;
  else if (sent.p12passwordPolicy === null) delete k.passwordPolicy;
  return k;
}
