import { PermanentError } from '@certwright/sdk';

/** RFC 5280 CRLReason codes by the names Certwright (and its clients) use, compared without case or punctuation. */
export const REVOCATION_REASONS: Readonly<Record<string, number>> = Object.freeze({
  unspecified: 0,
  keycompromise: 1,
  cacompromise: 2,
  affiliationchanged: 3,
  affiliationchange: 3,
  superseded: 4,
  cessationofoperation: 5,
  certificatehold: 6,
  privilegewithdrawn: 9,
  aacompromise: 10,
});

const CODES = new Set(Object.values(REVOCATION_REASONS));

/** The CRLReason code ACME's revokeCert `reason` carries (RFC 8555 §7.6). Empty means unspecified. */
export function reasonCode(reason: string | undefined | null): number {
  if (reason === undefined || reason === null || reason.trim() === '') return 0;
  const key = reason.toLowerCase().replace(/[^a-z0-9]/g, '');
  const named = REVOCATION_REASONS[key];
  if (named !== undefined) return named;
  if (/^\d{1,2}$/.test(key) && CODES.has(Number(key))) return Number(key);
  throw new PermanentError(`unknown revocation reason "${reason.slice(0, 64)}" (one of ${Object.keys(REVOCATION_REASONS).join(', ')})`);
}
