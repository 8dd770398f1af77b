import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from './errors.js';
import { BODY_LIMIT } from './schemas.js';

/** Keys that would reach an object's prototype once merged: refused in any SCIM body. */
const POISON = new Set(['__proto__', 'constructor', 'prototype']);

/** A SCIM body's text → its JSON; malformed JSON (or a prototype key) is 400 invalidSyntax; empty is none. */
export function parseScimJson(text: string): unknown {
  if (text.trim().length === 0) return undefined;
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (POISON.has(key)) throw new SyntaxError(`"${key}" is not accepted as a key`);
      return value;
    });
  } catch (err) {
    throw badRequest('invalidSyntax', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The SCIM scope's bodies: application/scim+json (RFC 7644 §3.1) and application/json, up to BODY_LIMIT bytes
 * (413 beyond); any other media type is 415. Only this scope: the rest of the API keeps its own parsers.
 */
export function installScimBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    try {
      done(null, parseScimJson(typeof body === 'string' ? body : body.toString('utf8')));
    } catch (err) {
      done(err as Error);
    }
  });
}
