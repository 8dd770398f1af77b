import { randomBytes } from 'node:crypto';

/** Unguessable ids for URLs (128 bits, base64url): an order or authorization URL is not a secret, but not enumerable either. */
export const newId = (): string => randomBytes(16).toString('base64url');

export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A challenge token: 256 bits, base64url of whole bytes (clients decode it, RFC 8555 §8.1). */
export const newToken = (): string => randomBytes(32).toString('base64url');
