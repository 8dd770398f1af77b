import { ProblemError } from '../../errors/index.js';

/** The object of a decoder POST: a bare JSON string, the first of `fields` that holds one, or a raw body. */
export function bodyObject(body: unknown, fields: readonly string[], hint: string): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) {
    if (body.length === 0) throw new ProblemError('PKI-001', { detail: 'empty body' });
    return body;
  }
  if (body !== null && typeof body === 'object') {
    for (const f of fields) {
      const v = (body as Record<string, unknown>)[f];
      if (typeof v === 'string' && v.length > 0) return v;
    }
  }
  throw new ProblemError('PKI-001', { detail: hint });
}
