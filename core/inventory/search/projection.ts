import { invalid } from './elements.js';

/** Every property a certificate result can carry (client-compat §3), plus the derived `status`. */
export const CERTIFICATE_PROPERTIES = new Set([
  '_id',
  'module',
  'profile',
  'owner',
  'team',
  'contactEmail',
  'certificate',
  'thumbprint',
  'publicKeyThumbprint',
  'selfSigned',
  'dn',
  'serial',
  'issuer',
  'notBefore',
  'notAfter',
  'revoked',
  'revocationDate',
  'revocationReason',
  'keyType',
  'signingAlgorithm',
  'subjectAlternateNames',
  'labels',
  'metadata',
  'holderId',
  'escrowed',
  'autoRenew',
  'crlSynchronized',
  'extensions',
  'grades',
  'thirdPartyData',
  'triggerResults',
  'discoveryData',
  'discoveryInfo',
  'discoveredTrusted',
  'requestedX509Data',
  'status',
  // Not a stored property: the caller's workflow rights on each result (client-compat §4).
  'permissions',
]);

/**
 * `fields` → the properties to answer: absent or null = everything (null), `[]` = `_id` only,
 * otherwise the named camelCase properties plus `_id`. An unknown name is refused (HQL-002) rather
 * than silently answered as nothing.
 */
export function projectionOf(fields: readonly string[] | null | undefined): ReadonlySet<string> | null {
  if (fields === null || fields === undefined) return null;
  const out = new Set<string>(['_id']);
  for (const f of fields) {
    if (!CERTIFICATE_PROPERTIES.has(f)) throw invalid(`Unknown field "${f}"`);
    out.add(f);
  }
  return out;
}
