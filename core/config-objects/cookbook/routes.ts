import type { FastifyInstance } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { PRODUCT_VERSION } from '../../version.js';
import type { ConfigRegistry, RegisteredType } from '../registry.js';
import { generateCookbook } from './generate.js';

const readPermission = (t: RegisteredType): string => `configuration:${t.decl.section}:read`;

/**
 * GET /api/v1/adoc: the configuration cookbook in AsciiDoc (spec: "limited to the caller's administration
 * permissions"). Any authenticated principal may ask; the document holds the sections it may read, and a
 * principal that may read none is refused as a permission problem.
 */
export function cookbookRoutes(app: FastifyInstance, registry: ConfigRegistry): void {
  app.get('/api/v1/adoc', {
    config: { capability: 'configuration', access: 'authenticated' },
    schema: {
      tags: ['system'],
      summary: 'The configuration cookbook (AsciiDoc)',
      description: "It generates the configuration cookbook in adoc format, limited to the caller's administration permissions.",
      produces: ['text/plain'],
      response: { 200: { type: 'string' } },
    },
    handler: async (request, reply) => {
      const permissions = request.principal!.permissions;
      const types = registry.types().filter((t) => permissions.allows(readPermission(t)));
      if (types.length === 0) throw new ProblemError('SEC-PERM-001', { message: 'The cookbook requires a configuration:<section>:read permission' });
      let document: string;
      try {
        document = await generateCookbook({ registry, tenant: request.tenant, types, now: new Date(), version: PRODUCT_VERSION });
      } catch (err) {
        // Logged for the operator; the caller gets the catalogued message only.
        request.log.error({ err }, 'the configuration cookbook could not be generated');
        throw new ProblemError('ADOC-001');
      }
      return reply.type('text/plain; charset=utf-8').send(document);
    },
  });
}
