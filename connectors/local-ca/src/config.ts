import { ConfigurationError, type KeyTypeName } from '@certwright/sdk';

export const CA_KEY_TYPES = ['ec-secp256r1', 'ec-secp384r1', 'rsa-2048', 'rsa-3072', 'rsa-4096', 'ed-25519'] as const satisfies readonly KeyTypeName[];

export interface LocalCaConfig {
  keyType: KeyTypeName;
  rootSubject: string;
  issuingSubject: string;
  rootValidityDays: number;
  issuingValidityDays: number;
  crlValidityHours: number;
  ocspValiditySeconds: number;
}

/** An RFC 4514 attribute value: the special characters escaped (§2.4). */
const escapeValue = (text: string): string => text.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/^[ #]/, (c) => `\\${c}`).replace(/ $/, '\\ ');

function integer(value: unknown, fallback: number, name: string, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw new ConfigurationError(`${name} must be an integer from 1 to ${max}`);
  return value;
}

/** The instance's configuration with the manifest's defaults (the subjects name the instance). */
export function readConfig(instanceName: string, raw: Record<string, unknown>): LocalCaConfig {
  const keyType = raw.keyType ?? 'ec-secp256r1';
  if (typeof keyType !== 'string' || !(CA_KEY_TYPES as readonly string[]).includes(keyType)) throw new ConfigurationError(`keyType must be one of ${CA_KEY_TYPES.join(', ')}`);
  const subject = (value: unknown, role: string, name: string): string => {
    if (value === undefined) return `CN=Certwright Local ${role} CA ${escapeValue(instanceName)},O=Certwright`;
    if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`${name} must be an RFC 4514 subject`);
    return value;
  };
  return {
    keyType: keyType as KeyTypeName,
    rootSubject: subject(raw.rootSubject, 'Root', 'rootSubject'),
    issuingSubject: subject(raw.issuingSubject, 'Issuing', 'issuingSubject'),
    rootValidityDays: integer(raw.rootValidityDays, 3650, 'rootValidityDays', 36500),
    issuingValidityDays: integer(raw.issuingValidityDays, 1825, 'issuingValidityDays', 36500),
    crlValidityHours: integer(raw.crlValidityHours, 24, 'crlValidityHours', 8760),
    ocspValiditySeconds: integer(raw.ocspValiditySeconds, 3600, 'ocspValiditySeconds', 604800),
  };
}
