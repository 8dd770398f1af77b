import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { DecodeAnswer, DecodeTask } from '../../workers/index.js';
import type { DecoderRouteContext } from '../index.js';
import { MAX_OBJECT_BYTES } from '../input.js';
import { crlViewSchema } from '../views/crl.js';
import { decodedPkcs12Schema } from '../pkcs12/schema.js';
import { DETECTED_TYPE_NAMES } from '../views/detection.js';
import { acceptMultipart, MultipartBody } from './multipart-body.js';

const config = { capability: 'common', access: 'authenticated' } as const;
/** 400 for bad input; 429 SRV-004 / 503 SRV-003 when the decode pool is full (core/workers). */
const problem = { 400: { $ref: 'Problem#' }, 429: { $ref: 'Problem#' }, 503: { $ref: 'Problem#' } };

/**
 * Raw bodies these routes read besides JSON, as bytes, in this plugin's scope only: DER under its
 * registered media types or octet-stream, PEM / base64 as text. (detect takes any of them.)
 */
const RAW_TYPES = [
  'application/pkix-crl',
  'application/x-pkcs12',
  'application/pkcs12',
  'application/octet-stream',
  'application/x-pem-file',
  'text/plain',
  'application/pkcs7-mime',
  'application/x-pkcs7-certificates',
  'application/pkix-cert',
  'application/x-x509-ca-cert',
  'application/pkcs8',
  'application/pkcs10',
  'application/ocsp-request',
  'application/ocsp-response',
  'application/timestamp-query',
  'application/timestamp-reply',
];

/** A base64 or PEM body of the largest object we decode, plus JSON framing (the server default is 1 MiB). */
const BODY_LIMIT = Math.ceil((MAX_OBJECT_BYTES * 4) / 3) + 64 * 1024;

const detectionSchema = {
  type: 'object',
  required: ['type', 'encoding'],
  properties: {
    type: {
      type: 'string',
      enum: DETECTED_TYPE_NAMES,
      description: "Horizon's names where its clients have one (bundle: a PKCS#7 certificate bundle; timestamping-response; openssh-cert), Certwright's otherwise",
    },
    value: { description: 'The decoded object, as its own decoder answers it (x509, pkcs10, crl, rfc6960, rfc3161, openssh); absent for keys, PKCS#12 files and JWKs' },
    encoding: { type: 'string', enum: ['pem', 'base64', 'der', 'json', 'openssh'] },
    label: { type: 'string', description: 'the PEM label, for PEM input' },
    details: { type: 'object', additionalProperties: true, description: 'a few facts (subject, algorithm, counts); never key material' },
  },
} as const;

/** A field a client may send as a string or as `{value}` (client-compat: pkcs12 and password are `{value}` objects). */
const valueOf = (field: unknown): unknown => (typeof field === 'object' && field !== null && !Buffer.isBuffer(field) && 'value' in field ? (field as { value: unknown }).value : field);

/** The object of a POST: the body itself (raw, or a bare JSON string), else the first of `fields` it has, or its multipart part. */
function bodyObject(body: unknown, fields: string[], what: string): string | Uint8Array {
  if (body instanceof MultipartBody) return body.object(fields);
  let found: unknown = body;
  if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) {
    found = undefined;
    for (const field of fields) {
      found = valueOf((body as Record<string, unknown>)[field]);
      if (found !== undefined) break;
    }
  }
  if ((typeof found === 'string' || Buffer.isBuffer(found)) && found.length > 0) return found;
  throw new ProblemError('PKI-001', { detail: `send the ${what} as a JSON string, as {"${fields[0]}": "…"}, or as a raw body` });
}

/** Whose decodes these are, for the pool's per-principal limit (every route here is authenticated). */
const callerOf = (request: FastifyRequest): string => (request.principal ? `${request.principal.tenant}\u0000${request.principal.identifier}` : `address\u0000${request.ip}`);

/** A pooled answer already serialized (large CRLs and detections) goes out as its bytes; a view through the response schema. */
function send(reply: FastifyReply, answer: DecodeAnswer): unknown {
  if ('value' in answer) return answer.value;
  return reply.type('application/json').send(answer.json);
}

/**
 * Decoders of the rarer objects (spec "Routes common to webra, events and configuration"):
 * - GET /api/v1/rfc5280/crl/:pem (URL-encoded PEM or base64) and POST /api/v1/rfc5280/crl (JSON string
 *   or {crl|pem|data|value}; raw DER as application/pkix-crl / octet-stream; PEM as text);
 * - POST /api/v1/rfc5280/pkcs12: JSON {pkcs12, password}, each a string or {value} (pkcs12 base64 or
 *   PEM); or the raw file (application/x-pkcs12) with the password in X-PKCS12-Password, never in the
 *   URL. Multipart is not taken. Private keys are described, never returned; the password is not logged;
 * - POST /api/v1/crypto/detect: JSON {data} (string or JSON object), a bare JSON string, a JWK object,
 *   or any raw body.
 * Every bad input answers 400 with a PKI code; an unexpected decoder exception is logged (without the
 * body) and still answers 400 PKI-001, never 500 (only a decode thread that dies answers 500 SRV-001).
 *
 * PKCS#12 files, and CRLs and detections of more than CRL_INLINE_MAX_BYTES, decode on the kernel's worker
 * pool (core/workers), never on the event loop: a full pool answers 429 SRV-004 (this principal has as
 * many decodes in flight as it may) or 503 SRV-003 (everyone's), with Retry-After.
 */
export async function rareDecoderRoutes(app: FastifyInstance, ctx: DecoderRouteContext): Promise<void> {
  for (const type of RAW_TYPES) {
    if (!app.hasContentTypeParser(type)) app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));
  }
  acceptMultipart(app, BODY_LIMIT);

  /** The answer of the task `make` builds, decoded inline or on the pool; an unexpected exception is PKI-001. */
  const decoded = async (request: FastifyRequest, reply: FastifyReply, make: () => DecodeTask): Promise<unknown> => {
    try {
      return send(reply, await ctx.workers.decode(make(), callerOf(request)));
    } catch (err) {
      if (err instanceof ProblemError) throw err;
      request.log.warn({ err }, 'decoder failed on its input');
      throw new ProblemError('PKI-001');
    }
  };

  const crlFromPath = (request: FastifyRequest, reply: FastifyReply) => {
    const params = request.params as { pem?: string; '*'?: string };
    return decoded(request, reply, () => ({ kind: 'crl', input: params.pem ?? params['*'] ?? '' }));
  };
  app.get('/api/v1/rfc5280/crl/:pem', {
    config,
    schema: {
      tags: ['rfc5280'],
      summary: 'Decode a CRL given as a percent-encoded PEM (or base64) in the path; POST large CRLs',
      params: { type: 'object', required: ['pem'], properties: { pem: { type: 'string', description: 'The PEM, percent-encoded' } } },
      response: { 200: crlViewSchema, ...problem },
    },
    handler: async (request, reply) => crlFromPath(request, reply),
  });
  // A PEM whose slashes were not percent-encoded spans several path segments.
  app.get('/api/v1/rfc5280/crl/*', { config, schema: { hide: true, response: { 200: crlViewSchema, ...problem } }, handler: async (request, reply) => crlFromPath(request, reply) });

  app.post('/api/v1/rfc5280/crl', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags: ['rfc5280'],
      summary: 'Decode a CRL',
      description: 'JSON: a string, or {"crl"|"pem"|"data"|"value": "…"}; a raw body: DER (application/pkix-crl, application/octet-stream) or PEM (text/plain, application/x-pem-file); or multipart/form-data with the CRL in part `crl` (as Horizon\'s MCP server uploads it).',
      response: { 200: crlViewSchema, ...problem },
    },
    handler: async (request, reply) => decoded(request, reply, () => ({ kind: 'crl', input: bodyObject(request.body, ['crl', 'pem', 'data', 'value'], 'CRL') })),
  });

  app.post('/api/v1/rfc5280/pkcs12', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags: ['rfc5280'],
      summary: 'Open a PKCS#12 file with its password: certificates, key descriptions, friendly names, MAC and encryption',
      description:
        'JSON {"pkcs12": base64 or PEM, "password": "…"}, each also accepted as {"value": "…"}; or the raw file as application/x-pkcs12 with the password in the X-PKCS12-Password header. Multipart is not accepted. A wrong password is 400 PKI-003. Private keys are described, never returned.',
      response: { 200: decodedPkcs12Schema, ...problem },
    },
    handler: async (request, reply) =>
      decoded(request, reply, () => {
        const body = request.body;
        const raw = Buffer.isBuffer(body);
        const header = request.headers['x-pkcs12-password'];
        const password = raw ? (typeof header === 'string' ? header : '') : valueOf((body as { password?: unknown } | null)?.password ?? '');
        if (typeof password !== 'string') throw new ProblemError('PKI-003', { detail: 'the password must be a string' });
        return { kind: 'pkcs12', input: bodyObject(body, ['pkcs12', 'data'], 'PKCS#12 file'), password };
      }),
  });

  app.post('/api/v1/crypto/detect', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags: ['crypto'],
      summary: 'Tell what an object is (certificate, CSR, CRL, PKCS#7, PKCS#12, private / public key, OpenSSH key or certificate, OCSP, TSP, JWK)',
      description: 'JSON {"data": "…"} (a string, or a JWK object), a bare JSON string, a JWK, any raw body (DER or text), or multipart/form-data with the object in part `file` (as Horizon\'s MCP server uploads it). PEM is decided by its label; other input by its DER structure. Answers {type, value} as Horizon\'s clients read them, with encoding, label and details.',
      response: { 200: detectionSchema, ...problem },
    },
    handler: async (request, reply) =>
      decoded(request, reply, (): DecodeTask => {
        const body = request.body instanceof MultipartBody ? request.body.object(['file', 'data']) : request.body;
        if (Buffer.isBuffer(body) || typeof body === 'string') {
          if (body.length === 0) throw new ProblemError('PKI-001', { detail: 'empty body' });
          return { kind: 'detect', input: body };
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ProblemError('PKI-001', { detail: 'send {"data": "…"}, a JSON string, a JWK or a raw body' });
        const data = (body as { data?: unknown }).data;
        if (data === undefined) return { kind: 'detect', input: body as Record<string, unknown> };
        if (typeof data === 'string' && data.length > 0) return { kind: 'detect', input: data };
        if (typeof data === 'object' && data !== null && !Array.isArray(data)) return { kind: 'detect', input: data as Record<string, unknown> };
        throw new ProblemError('PKI-001', { detail: '"data" must be a non-empty string or a JSON object' });
      }),
  });
}
