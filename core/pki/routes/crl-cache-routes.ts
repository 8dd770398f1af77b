import type { FastifyInstance } from 'fastify';
import { pkiServices } from '../cas/services.js';
import { getCrlCache, listCrlCache } from '../crl-cache/views.js';
import type { PkiRouteContext } from '../index.js';

const READ = { permission: 'configuration:cas:read' } as const;
const tags = ['crl-cache'];

const entrySchema = {
  $id: 'CrlCacheEntry',
  type: 'object',
  required: ['ca', 'dn', 'url', 'thisUpdate', 'nextUpdate', 'crlNumber', 'entries', 'fetchedAt', 'lastAttempt', 'lastError', 'nextRefresh'],
  properties: {
    ca: { type: 'string', description: 'CA name' },
    dn: { type: 'string', description: 'CA subject (the CRL issuer)' },
    url: { type: ['string', 'null'], description: 'Where the CRL was fetched from' },
    thisUpdate: { type: ['integer', 'null'], description: 'epoch ms' },
    nextUpdate: { type: ['integer', 'null'], description: 'epoch ms' },
    crlNumber: { type: ['string', 'null'], description: 'decimal' },
    entries: { type: ['integer', 'null'], description: 'revoked serials listed' },
    fetchedAt: { type: ['integer', 'null'], description: 'epoch ms of the fetch that brought this CRL' },
    lastAttempt: { type: ['integer', 'null'], description: 'epoch ms' },
    lastError: { type: ['string', 'null'], description: 'why the last attempt did not replace the CRL' },
    nextRefresh: { type: ['integer', 'null'], description: 'epoch ms of the next planned fetch' },
    pem: { type: 'string', description: 'the cached CRL (GET /:ca only)' },
  },
} as const;

const caParams = { type: 'object', required: ['ca'], properties: { ca: { type: 'string', minLength: 1, maxLength: 191 } } } as const;

/** /api/v1/caches/crls: GET (every CA's cache entry), GET /:ca (one, with the CRL). */
export async function crlCacheRoutes(app: FastifyInstance, ctx: PkiRouteContext): Promise<void> {
  const { caStore, crlStore } = pkiServices(ctx);
  app.addSchema(entrySchema);

  app.get('/api/v1/caches/crls', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List the cached CRLs and the state of their refresh', response: { 200: { type: 'array', items: { $ref: 'CrlCacheEntry#' } } } },
    handler: (request) => listCrlCache(caStore, crlStore, request.tenant),
  });

  app.get<{ Params: { ca: string } }>('/api/v1/caches/crls/:ca', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: "Get a CA's cached CRL", params: caParams, response: { 200: { $ref: 'CrlCacheEntry#' } } },
    handler: (request) => getCrlCache(caStore, crlStore, request.tenant, request.params.ca),
  });
}
