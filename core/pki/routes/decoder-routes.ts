import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { parseCsrPem } from '../csr/parse.js';
import { csrView, csrViewSchema } from '../views/csr.js';
import type { PkiRouteContext } from '../index.js';
import { parseCertificatePem } from '../x509/parse.js';
import { certificateView, certificateViewSchema } from '../views/x509.js';
import { acceptMultipart } from './multipart-body.js';
import { bodyObject } from './request-body.js';

const tags = ['rfc5280'];
const config = { capability: 'common', access: 'authenticated' } as const;

/** Raw bodies the decoders take besides JSON: DER as bytes, PEM as text. */
const BINARY_TYPES = ['application/pkix-cert', 'application/pkcs10', 'application/x-x509-ca-cert', 'application/x-x509-user-cert', 'application/octet-stream'];
const TEXT_TYPES = ['text/plain', 'application/x-pem-file', 'application/pem-certificate-chain'];

/** JSON fields that may carry the object, in the order they are tried. */
const HINT = 'send the object as a JSON string, as {"pem": "…"}, as a raw PEM/DER body, or as a multipart file part';
const FIELDS = ['pem', 'certificate', 'csr', 'pkcs10', 'x509', 'value'] as const;


/** The path parameter, whether the PEM came percent-encoded (`:pem`) or with raw slashes (`*`). */
const pathObject = (request: FastifyRequest): string => {
  const params = request.params as { pem?: string; '*'?: string };
  return params.pem ?? params['*'] ?? '';
};

const pemParams = { type: 'object', required: ['pem'], properties: { pem: { type: 'string', description: 'The PEM, percent-encoded' } } } as const;
const rawBody = (part: string) => `JSON: a string, or {"pem": "…"} (also certificate / csr); a raw body: DER (application/pkix-cert, application/pkcs10, application/octet-stream) or PEM (text/plain, application/x-pem-file); or multipart/form-data with the file in part \`${part}\` (as Horizon's MCP server uploads it), as PEM, base64 or DER.`;

/**
 * The X.509 and PKCS#10 decoders (/api/v1/rfc5280/x509, /pkcs10): GET with the PEM in the path,
 * POST with it in the body. Answers are the decoded object; any bad input is a 400 PKI problem.
 */
export async function decoderRoutes(app: FastifyInstance, _ctx: PkiRouteContext): Promise<void> {
  // Only in this plugin's scope: the rest of the API keeps JSON-only bodies.
  app.addContentTypeParser(BINARY_TYPES, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.addContentTypeParser(TEXT_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  acceptMultipart(app);

  const decoders = [
    { path: 'x509', what: 'certificate', decode: (input: string | Uint8Array) => certificateView(parseCertificatePem(input)), response: certificateViewSchema },
    { path: 'pkcs10', what: 'PKCS#10 certificate request', decode: (input: string | Uint8Array) => csrView(parseCsrPem(input)), response: csrViewSchema },
  ] as const;

  for (const { path, what, decode, response } of decoders) {
    const url = `/api/v1/rfc5280/${path}`;
    app.get(`${url}/:pem`, {
      config,
      schema: { tags, summary: `Decode a ${what} given as a percent-encoded PEM in the path`, params: pemParams, response: { 200: response } },
      handler: async (request) => decode(pathObject(request)),
    });
    // A PEM whose slashes were not percent-encoded spans several path segments.
    app.get(`${url}/*`, {
      config,
      schema: { hide: true, response: { 200: response } },
      handler: async (request) => decode(pathObject(request)),
    });
    app.post(url, {
      config,
      schema: { tags, summary: `Decode a ${what}`, description: rawBody(path), response: { 200: response } },
      handler: async (request) => decode(bodyObject(request.body, FIELDS, HINT, [path])),
    });
  }
}
