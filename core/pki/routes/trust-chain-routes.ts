import type { FastifyInstance } from 'fastify';
import { caSchema } from '../cas/schema.js';
import { pkiServices } from '../cas/services.js';
import { decodeParam } from '../input.js';
import type { PkiRouteContext } from '../index.js';
import { certificatesIn, tcBody } from '../trust/tc-input.js';
import { DEFAULT_TC_ORDER, orderedChain, TC_ORDERS, type TcOrder } from '../trust/tc-view.js';
import { certificateViewSchema } from '../views/x509.js';
import { acceptMultipart } from './multipart-body.js';

const problemSchema = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } as const;

const treeSchema = {
  $id: 'TrustChainNode',
  type: 'object',
  required: ['ca', 'valid', 'trusted', 'complete', 'anchor', 'path', 'subordinates'],
  properties: {
    ca: { $ref: 'CertificateAuthority#' },
    valid: { type: 'boolean', description: 'trusted, complete and no problem on the path' },
    trusted: { type: 'boolean', description: 'a CA of the path is flagged trusted' },
    complete: { type: 'boolean', description: 'the path ends at a self-signed certificate' },
    anchor: { type: ['string', 'null'], description: 'the trusted CA the path ends at' },
    path: {
      type: 'array',
      description: "this CA's path to its root, this CA first",
      items: {
        type: 'object',
        required: ['dn', 'ca', 'problems'],
        properties: { dn: { type: 'string' }, ca: { type: ['string', 'null'] }, problems: { type: 'array', items: problemSchema } },
      },
    },
    subordinates: { type: 'array', items: { $ref: 'TrustChainNode#' } },
  },
} as const;

/** Each entry of a tc answer (Horizon's CFCertificateResponse, whose required keys the v2 Go client checks). */
const cfSchema = { $id: 'TrustChainCertificate', ...certificateViewSchema } as const;

const orderQuery = {
  type: 'object',
  properties: { order: { type: 'string', enum: [...TC_ORDERS], description: 'ltr (default): leaf → root; rtl: root → leaf; iltr / irtl: the same without the leaf' } },
} as const;
const chainResponse = { 200: { type: 'array', items: { $ref: 'TrustChainCertificate#' } } };
const tcTags = ['rfc5280'];
const chainTags = ['trustchains'];

/**
 * /api/v1/trustchains/ (the forest of imported CAs, GET :anchor the tree under one) and the trust chain
 * decoder /api/v1/rfc5280/tc: the path of a certificate, completed from the imported CAs, in the
 * requested order.
 */
export async function trustChainRoutes(app: FastifyInstance, ctx: PkiRouteContext): Promise<void> {
  const { trust } = pkiServices(ctx);
  // Sibling of the CA routes' scope: the CA schema is added here too (schemas are scoped like routes).
  app.addSchema(caSchema);
  app.addSchema(treeSchema);
  app.addSchema(cfSchema);
  // This scope only: a PEM bundle as text, DER bytes, or the multipart upload of Horizon's clients.
  app.addContentTypeParser(['text/plain', 'application/x-pem-file'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser(['application/octet-stream', 'application/pkix-cert'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  acceptMultipart(app);

  app.get('/api/v1/trustchains/', {
    config: { capability: 'webra', access: 'authenticated' },
    schema: { tags: chainTags, summary: 'The imported CAs as trees: each CA under the CA that issued it, with its path and its problems', response: { 200: { type: 'array', items: { $ref: 'TrustChainNode#' } } } },
    handler: (request) => trust.forest(request.tenant),
  });

  app.get<{ Params: { anchor: string } }>('/api/v1/trustchains/:anchor', {
    config: { capability: 'webra', access: 'authenticated' },
    schema: {
      tags: chainTags,
      summary: 'The tree under one CA (by name)',
      params: { type: 'object', required: ['anchor'], properties: { anchor: { type: 'string', minLength: 1, maxLength: 191 } } },
      response: { 200: { $ref: 'TrustChainNode#' } },
    },
    handler: (request) => trust.tree(request.tenant, request.params.anchor),
  });

  const chain = async (tenant: string, input: string | Uint8Array, order: TcOrder | undefined) =>
    orderedChain(await trust.chainForBundle(tenant, certificatesIn(input)), order ?? DEFAULT_TC_ORDER);

  app.get<{ Params: { pem: string }; Querystring: { order?: TcOrder } }>('/api/v1/rfc5280/tc/:pem', {
    config: { capability: 'common', access: 'authenticated' },
    schema: { tags: tcTags, summary: 'Trust chain of a certificate (percent-encoded PEM), completed from the imported CAs', querystring: orderQuery, response: chainResponse },
    handler: (request) => chain(request.tenant, decodeParam(request.params.pem), request.query.order),
  });

  app.post<{ Querystring: { order?: TcOrder } }>('/api/v1/rfc5280/tc', {
    config: { capability: 'common', access: 'authenticated' },
    schema: {
      tags: tcTags,
      summary: 'Trust chain of a certificate or bundle: JSON {pem}, a PEM bundle (text/plain), DER, or multipart field x509',
      querystring: orderQuery,
      response: chainResponse,
    },
    handler: (request) => chain(request.tenant, tcBody(request.body), request.query.order),
  });
}
