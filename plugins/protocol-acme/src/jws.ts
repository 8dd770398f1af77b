/**
 * JWS request bodies (RFC 8555 §6.2): flattened JSON serialization, protected header with alg, nonce, url
 * and exactly one of jwk (new-acct, revoke by certificate key) and kid (every other request).
 */
import { calculateJwkThumbprint, flattenedVerify, importJWK, type JWK } from 'jose';
import { AcmeProblem } from './problems.js';

/** Asymmetric algorithms accepted for account keys (badSignatureAlgorithm lists them). */
export const ACCEPTED_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'PS256', 'EdDSA'] as const;

export interface FlattenedJws {
  protected: string;
  payload: string;
  signature: string;
}

export interface ProtectedHeader {
  alg: string;
  nonce?: unknown;
  url?: unknown;
  jwk?: JWK;
  kid?: string;
}

export interface VerifiedJws {
  header: ProtectedHeader;
  /** null: an empty payload (POST-as-GET). */
  payload: Record<string, unknown> | null;
  /** The key that verified: the header's jwk, or the account's. */
  jwk: JWK;
}

const b64json = (part: string, what: string): unknown => {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) throw new AcmeProblem('malformed', `${what} is not base64url`);
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new AcmeProblem('malformed', `${what} is not base64url-encoded JSON`);
  }
};

/** The body as a flattened JWS, or `malformed`. */
export function parseJws(body: unknown): FlattenedJws {
  let value = body;
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    try {
      value = JSON.parse(value.toString());
    } catch {
      throw new AcmeProblem('malformed', 'The body is not JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AcmeProblem('malformed', 'The body is not a JWS object');
  const v = value as Record<string, unknown>;
  if ('signatures' in v) throw new AcmeProblem('malformed', 'Only the flattened JWS JSON serialization is accepted (RFC 8555 §6.2)');
  if ('header' in v) throw new AcmeProblem('malformed', 'The JWS has an unprotected header (RFC 8555 §6.2)');
  for (const field of ['protected', 'payload', 'signature'] as const) {
    if (typeof v[field] !== 'string') throw new AcmeProblem('malformed', `The JWS has no ${field} string`);
  }
  return { protected: v.protected as string, payload: v.payload as string, signature: v.signature as string };
}

/** The protected header, checked for what every request needs. */
export function headerOf(jws: FlattenedJws): ProtectedHeader {
  const header = b64json(jws.protected, 'The protected header');
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new AcmeProblem('malformed', 'The protected header is not an object');
  const h = header as ProtectedHeader;
  if (typeof h.alg !== 'string' || !(ACCEPTED_ALGORITHMS as readonly string[]).includes(h.alg)) {
    throw new AcmeProblem('badSignatureAlgorithm', `Algorithm ${JSON.stringify(h.alg ?? null)} is not accepted`, { algorithms: [...ACCEPTED_ALGORITHMS] });
  }
  if ((h.jwk === undefined) === (h.kid === undefined)) throw new AcmeProblem('malformed', 'The protected header needs exactly one of jwk and kid');
  if (h.jwk !== undefined && (typeof h.jwk !== 'object' || h.jwk === null || Array.isArray(h.jwk))) throw new AcmeProblem('malformed', 'jwk is not a JSON Web Key');
  if (h.kid !== undefined && typeof h.kid !== 'string') throw new AcmeProblem('malformed', 'kid is not a string');
  if (typeof h.url !== 'string') throw new AcmeProblem('malformed', 'The protected header has no url');
  return h;
}

/**
 * Imported account keys by algorithm and JWK: an account signs every request with the same key, and importing
 * it (an EC point check) cost more than the signature check. Bounded; the oldest entry goes first.
 */
const imported = new Map<string, Awaited<ReturnType<typeof importJWK>>>();
const IMPORTED_MAX = 2048;

async function importOnce(jwk: JWK, alg: string): Promise<Awaited<ReturnType<typeof importJWK>>> {
  const cacheKey = `${alg}\u0000${JSON.stringify(jwk)}`;
  const hit = imported.get(cacheKey);
  if (hit) return hit;
  const key = await importJWK(jwk, alg);
  if (imported.size >= IMPORTED_MAX) imported.delete(imported.keys().next().value!);
  imported.set(cacheKey, key);
  return key;
}

/** Verifies the signature with `jwk` (public, no private members); answers the payload. */
export async function verifyWith(jws: FlattenedJws, header: ProtectedHeader, jwk: JWK): Promise<VerifiedJws> {
  if ('d' in jwk || 'k' in jwk) throw new AcmeProblem('badPublicKey', 'The key is not a public asymmetric key');
  let key;
  try {
    key = await importOnce(jwk, header.alg);
  } catch (err) {
    throw new AcmeProblem('badPublicKey', `The key does not import for ${header.alg}: ${(err as Error).message}`);
  }
  if (jwk.kty === 'RSA' && typeof jwk.n === 'string' && Buffer.from(jwk.n, 'base64url').length * 8 < 2048) throw new AcmeProblem('badPublicKey', 'RSA account keys need 2048 bits at least');
  try {
    await flattenedVerify(jws, key as Parameters<typeof flattenedVerify>[1], { algorithms: [header.alg] });
  } catch {
    throw new AcmeProblem('malformed', 'The JWS signature does not verify');
  }
  const payload = jws.payload === '' ? null : b64json(jws.payload, 'The payload');
  if (payload !== null && (typeof payload !== 'object' || Array.isArray(payload))) throw new AcmeProblem('malformed', 'The payload is not a JSON object');
  return { header, payload: payload as Record<string, unknown> | null, jwk };
}

/** RFC 7638 thumbprint (SHA-256), the key's identity. */
export const thumbprintOf = (jwk: JWK): Promise<string> => calculateJwkThumbprint(jwk, 'sha256');

/** The public members of a JWK (what is stored and compared). */
export function publicJwk(jwk: JWK): JWK {
  const { kty, crv, x, y, n, e } = jwk;
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
}
