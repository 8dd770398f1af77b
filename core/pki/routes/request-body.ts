import { ProblemError } from '../../errors/index.js';
import { MultipartBody } from './multipart-body.js';

/**
 * The object of a decoder POST: a bare JSON string, the first of `fields` that holds one, a raw body, or
 * the part of a multipart upload named one of `parts` (by default the same names as the JSON fields).
 */
export function bodyObject(body: unknown, fields: readonly string[], hint: string, parts: readonly string[] = fields): string | Uint8Array {
  if (body instanceof MultipartBody) return body.object(parts);
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
