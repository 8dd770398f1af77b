import type { FastifyInstance } from 'fastify';

/** GET /api/v1/openapi.json: the OpenAPI 3 document generated from every route's schemas. */
export async function openapiRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/v1/openapi.json',
    { config: { capability: 'common', access: 'public' }, schema: { hide: true } },
    async () => app.swagger(),
  );
}
