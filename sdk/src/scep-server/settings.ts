/** A profile's SCEP settings (`protocols.<protocol>` of the profile: scep, mdm), with their defaults. */
import type { ProtocolProfile } from '../contracts/enrollment.js';

export interface ScepSettings {
  challenge: 'one-time' | 'static';
  staticChallenge: string | null;
  adminAccounts: string[] | null;
  allowLegacyAlgorithms: boolean;
  allowSubjectChange: boolean;
}

export function scepSettings(profile: ProtocolProfile): ScepSettings {
  const s = profile.settings;
  const staticChallenge = typeof s.staticChallenge === 'string' && s.staticChallenge !== '' ? s.staticChallenge : null;
  return {
    challenge: s.challenge === 'static' && staticChallenge ? 'static' : 'one-time',
    staticChallenge,
    adminAccounts: Array.isArray(s.adminAccounts) ? s.adminAccounts.filter((a): a is string => typeof a === 'string') : null,
    allowLegacyAlgorithms: s.allowLegacyAlgorithms === true,
    allowSubjectChange: s.allowSubjectChange === true,
  };
}

/** Content ciphers accepted from clients: AES always; 3DES and single DES only for legacy clients. */
export function allowedCiphers(settings: ScepSettings): string[] {
  const modern = ['aes-128-cbc', 'aes-192-cbc', 'aes-256-cbc'];
  return settings.allowLegacyAlgorithms ? [...modern, 'des-ede3-cbc', 'des-cbc'] : modern;
}

/** Message digests accepted: SHA-2 always; SHA-1 (and MD5, never) only for legacy clients. */
export function allowedDigests(settings: ScepSettings): string[] {
  const modern = ['sha256', 'sha384', 'sha512', 'sha224'];
  return settings.allowLegacyAlgorithms ? [...modern, 'sha1'] : modern;
}

/**
 * GetCACaps (RFC 8894 §3.5.2), one capability per line: every digest we accept is listed. (Debian's strongSwan
 * pki 5.9.8 maps capability names to flags off by some places: measured here, only a list holding SHA-384 lets it
 * use AES, SHA-256 and POST.)
 */
export function capabilities(settings: ScepSettings): string {
  const caps = ['AES', 'POSTPKIOperation', 'Renewal', 'SHA-256', 'SHA-384', 'SHA-512', 'SCEPStandard'];
  if (settings.allowLegacyAlgorithms) caps.push('DES3', 'SHA-1');
  return `${caps.join('\n')}\n`;
}
