import { ConfigurationError } from '@certwright/sdk';

export const CHALLENGE_TYPES = ['http-01', 'dns-01', 'tls-alpn-01'] as const;
export type ChallengeType = (typeof CHALLENGE_TYPES)[number];

/** One instance's configuration, with defaults applied (manifest.json `configSchema` is the reference). */
export interface AcmeUpstreamConfig {
  directoryUrl: string;
  contactEmail?: string;
  /** Inline, or the name of a `password` credential (login = key id, password = MAC key) read at account creation. */
  eab?: { kid: string; hmacKey: string } | { credentials: string };
  caBundlePem?: string;
  challengeType: ChallengeType;
  /**
   * dns-01 only (and required with it): the DCV policy (/api/v1/dcv/policies/) whose provisioner writes the
   * `_acme-challenge` TXT records, through ctx.dcv.
   */
  dcvPolicy?: string;
  termsOfServiceAgreed: boolean;
  retryAfterSeconds: number;
  timeoutMs: number;
  caChainPem?: string;
}

/** A base64url MAC key, or a configuration error naming `field` (never the value). */
export function checkedMacKey(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value) throw new ConfigurationError(`acme-upstream: config ${field} is required`);
  if (!/^[A-Za-z0-9_\-+/]+=*$/.test(value) || Buffer.from(value, 'base64url').length === 0) throw new ConfigurationError(`acme-upstream: config ${field} must be base64url`);
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks and completes an instance's config. The kernel validates it with ajv against the manifest first;
 * this is the connector's own guard (a factory may be called with any instance). Messages name fields,
 * never values: a value may be a secret.
 */
export function readConfig(raw: unknown): AcmeUpstreamConfig {
  if (!isObject(raw)) throw new ConfigurationError('acme-upstream: the instance config must be an object');
  const bad = (field: string, why: string): never => {
    throw new ConfigurationError(`acme-upstream: config ${field} ${why}`);
  };
  const optString = (field: string): string | undefined => {
    const v = raw[field];
    if (v === undefined || v === null || v === '') return undefined;
    return typeof v === 'string' ? v : bad(field, 'must be a string');
  };

  const directoryUrl = optString('directoryUrl') ?? bad('directoryUrl', 'is required');
  let url: URL;
  try {
    url = new URL(directoryUrl);
  } catch {
    return bad('directoryUrl', 'is not a URL');
  }
  if (url.protocol !== 'https:') bad('directoryUrl', 'must be an https URL (RFC 8555 §6.1)');

  const contactEmail = optString('contactEmail');
  if (contactEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(contactEmail)) bad('contactEmail', 'is not an e-mail address');

  let eab: AcmeUpstreamConfig['eab'];
  if (raw.eab !== undefined && raw.eab !== null) {
    if (!isObject(raw.eab)) bad('eab', 'must be an object {kid, hmacKey} or {credentials}');
    const { kid, hmacKey, credentials } = raw.eab as Record<string, unknown>;
    if (credentials !== undefined) {
      if (typeof credentials !== 'string' || !credentials) bad('eab.credentials', 'must name a credential');
      if (kid !== undefined || hmacKey !== undefined) bad('eab', 'takes either {kid, hmacKey} or {credentials}, not both');
      eab = { credentials: credentials as string };
    } else {
      if (typeof kid !== 'string' || !kid) bad('eab.kid', 'is required');
      eab = { kid: kid as string, hmacKey: checkedMacKey(hmacKey, 'eab.hmacKey') };
    }
  }

  const caBundlePem = optString('caBundlePem');
  if (caBundlePem !== undefined && !caBundlePem.includes('-----BEGIN CERTIFICATE-----')) bad('caBundlePem', 'holds no PEM certificate');
  const caChainPem = optString('caChainPem');
  if (caChainPem !== undefined && !caChainPem.includes('-----BEGIN CERTIFICATE-----')) bad('caChainPem', 'holds no PEM certificate');

  const challengeType = (optString('challengeType') ?? 'http-01') as ChallengeType;
  if (!CHALLENGE_TYPES.includes(challengeType)) bad('challengeType', `must be one of ${CHALLENGE_TYPES.join(', ')}`);
  const dcvPolicy = optString('dcvPolicy');
  if (challengeType === 'dns-01' && dcvPolicy === undefined) {
    bad('dcvPolicy', 'is required with challengeType dns-01: the name of the DCV policy (/api/v1/dcv/policies/) whose provisioner writes the _acme-challenge records');
  }
  if (challengeType !== 'dns-01' && dcvPolicy !== undefined) bad('dcvPolicy', `is only used with challengeType dns-01 (challengeType is ${challengeType})`);

  const tos = raw.termsOfServiceAgreed ?? true;
  if (typeof tos !== 'boolean') bad('termsOfServiceAgreed', 'must be a boolean');

  const int = (field: string, def: number, min: number, max: number): number => {
    const v = raw[field] ?? def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return bad(field, `must be an integer from ${min} to ${max}`);
    return v;
  };

  return {
    directoryUrl: url.href,
    ...(contactEmail ? { contactEmail } : {}),
    ...(eab ? { eab } : {}),
    ...(caBundlePem ? { caBundlePem } : {}),
    ...(caChainPem ? { caChainPem } : {}),
    challengeType,
    ...(dcvPolicy ? { dcvPolicy } : {}),
    termsOfServiceAgreed: tos as boolean,
    retryAfterSeconds: int('retryAfterSeconds', 5, 1, 86_400),
    timeoutMs: int('timeoutMs', 30_000, 1_000, 300_000),
  };
}
