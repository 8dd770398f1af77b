import type { FastifyRequest } from 'fastify';
import { ProblemError, type ErrorCode } from '../../errors/index.js';

/** Deepest nesting accepted in a stored document: UI state is shallow, and deeper input only costs. */
export const MAX_DEPTH = 32;

/** Longest document or query name (the name columns hold 191 characters). */
export const NAME_SCHEMA = { type: 'string', minLength: 1, maxLength: 191, pattern: '\\S' } as const;

/** Whether `value` nests deeper than `max` levels; stops as soon as it does (never walks the whole tree). */
function tooDeep(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (tooDeep(child, max - 1)) return true;
  return false;
}

/**
 * Why a client document cannot be stored, or null. Depth is checked first: serializing a pathologically
 * nested value would overflow the stack. Size is that of the compact JSON we store, not of the request.
 */
export function documentProblem(value: unknown, maxBytes: number): string | null {
  if (tooDeep(value, MAX_DEPTH)) return `nested deeper than ${MAX_DEPTH} levels`;
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > maxBytes) return `${bytes} bytes of JSON, more than the ${maxBytes / 1024} KiB allowed`;
  return null;
}

/**
 * Routes here validate with `attachValidation`, so a body that does not match the schema answers the
 * resource's own code (…-002, which clients map to "invalid") instead of the generic HTTP-003.
 */
export function refuseInvalid(request: FastifyRequest, code: ErrorCode, what: string): void {
  const error = request.validationError;
  if (error) throw new ProblemError(code, { message: `Invalid ${what}: ${error.message}` });
}

/** The body as stored: the client's document minus `name`, which keys the row (answers add it back). */
export function withoutName(body: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, ...rest } = body;
  return rest;
}
