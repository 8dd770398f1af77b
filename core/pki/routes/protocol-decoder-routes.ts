import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import type { PkiRouteContext } from '../index.js';
import { decodeInput } from '../input.js';
import { decodeOcsp } from '../ocsp/decode.js';
import { decodeOpenSsh } from '../openssh/decode.js';
import { opensshSchema } from '../openssh/schema.js';
import { decodeTsp } from '../tsp/decode.js';
import { ocspView, ocspViewSchema } from '../views/ocsp.js';
import { tspView, tspViewSchema } from '../views/tsp.js';
import { acceptMultipart } from './multipart-body.js';
import { bodyObject } from './request-body.js';

const config = { capability: 'common', access: 'authenticated' } as const;

/** Raw DER bodies (RFC 6960 Appendix C, RFC 3161 §4 media types) and PEM / key lines as text. */
const BINARY_TYPES = ['application/ocsp-request', 'application/ocsp-response', 'application/timestamp-query', 'application/timestamp-reply', 'application/octet-stream'];
const TEXT_TYPES = ['text/plain', 'application/x-pem-file'];

/** JSON fields that may carry the object, in the order they are tried. */
const HINT = 'send the object as a JSON string, as {"data": "…"} (or base64 / value), as a raw body, or as a multipart file part';
const FIELDS = ['data', 'base64', 'value', 'pem'] as const;


/**
 * The path parameter, whether it came percent-encoded (`:base64`) or with raw slashes of base64 (`*`).
 * The router drops a trailing slash (ignoreTrailingSlash), which in raw base64 is the last character.
 */
const pathObject = (request: FastifyRequest): string => {
  const params = request.params as { base64?: string; '*'?: string };
  const value = params.base64 ?? params['*'] ?? '';
  return request.url.split('?')[0]!.endsWith('/') && !value.endsWith('/') ? `${value}/` : value;
};

const params = { type: 'object', required: ['base64'], properties: { base64: { type: 'string', description: 'The object as base64 (or PEM / key line), percent-encoded' } } } as const;

const decoders = [
  {
    path: 'openssh',
    what: 'an OpenSSH public key, certificate or private key',
    decode: decodeOpenSsh,
    response: opensshSchema,
    parts: ['openssh', 'file'],
    body: 'JSON: a string, or {"data": "…"}; or a raw body: the key line or key file as text/plain, a wire blob as application/octet-stream. Private key material is never returned.',
  },
  {
    path: 'rfc3161',
    what: 'an RFC 3161 time-stamp query, reply or token',
    decode: (input: string | Uint8Array) => tspView(decodeTsp(decodeInput(input).der)),
    response: tspViewSchema,
    parts: ['timestamping-response', 'timestamping-request', 'file'],
    body: 'JSON: a base64 string, or {"data": "…"}; a raw DER body (application/timestamp-query, application/timestamp-reply, application/octet-stream); or multipart/form-data with the object, DER or base64, in part `timestamping-response` (as Horizon\'s MCP server uploads it).',
  },
  {
    path: 'rfc6960',
    what: 'an RFC 6960 OCSP request or response',
    decode: (input: string | Uint8Array) => ocspView(decodeOcsp(decodeInput(input).der)),
    response: ocspViewSchema,
    parts: ['ocsp-response', 'ocsp-request', 'file'],
    body: 'JSON: a base64 string, or {"data": "…"}; a raw DER body (application/ocsp-request, application/ocsp-response, application/octet-stream); or multipart/form-data with the object, DER or base64, in part `ocsp-response` (as Horizon\'s MCP server uploads it).',
  },
] as const;

/**
 * The protocol decoders: GET with the object in the path, POST with it in the body. Which object it is
 * (request or response, query or reply, key or certificate) is read from its structure. Answers are
 * the decoded object; any bad input is a 400 PKI problem.
 */
export async function protocolDecoderRoutes(app: FastifyInstance, _ctx: PkiRouteContext): Promise<void> {
  // Only in this plugin's scope: the rest of the API keeps JSON-only bodies.
  app.addContentTypeParser(BINARY_TYPES, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser(TEXT_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  acceptMultipart(app);

  for (const { path, what, decode, response, body, parts } of decoders) {
    const tags = [path];
    const url = `/api/v1/${path}`;
    app.get(`${url}/:base64`, {
      config,
      schema: { tags, summary: `Decode ${what} given in the path`, params, response: { 200: response } },
      handler: async (request) => decode(pathObject(request)),
    });
    // Base64 whose slashes were not percent-encoded spans several path segments.
    app.get(`${url}/*`, {
      config,
      schema: { hide: true, response: { 200: response } },
      handler: async (request) => decode(pathObject(request)),
    });
    app.post(`${url}/`, {
      config,
      schema: { tags, summary: `Decode ${what}`, description: body, response: { 200: response } },
      handler: async (request) => decode(bodyObject(request.body, FIELDS, HINT, parts)),
    });
  }
}
