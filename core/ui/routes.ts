import type { FastifyInstance } from 'fastify';
import type { ConfigRegistry } from '../config-objects/registry.js';
import { parseCsrPemOffThread } from '../pki/csr/parse.js';
import { describeKey } from './key-description.js';
import { tidyPastedPem } from './pasted-pem.js';
import { formatAnswerSchema, formatBodySchema, uiSettingsSchema } from './schemas.js';
import { UiSettingsSource } from './settings.js';

const tags = ['ui'];
const problem = { $ref: 'Problem#' };

/**
 * The routes every web interface shares (spec: routes common to every UI): GET /api/v1/ui/ for the login
 * page, before anyone authenticates, and POST /api/v1/ui/cr/format, which turns a pasted certificate
 * request into its normalized PEM and what a form shows of it.
 */
export async function uiRoutes(app: FastifyInstance, opts: { registry: ConfigRegistry; version: string }): Promise<void> {
  const settings = new UiSettingsSource(opts.registry, opts.version);

  app.get(
    '/api/v1/ui/',
    {
      // Public: the login page renders it. It holds the version and the branding, nothing about hosts or capabilities.
      config: { capability: 'common', access: 'public' },
      schema: { tags, summary: 'The version, interface customization and terms of service names, for the login page', response: { 200: uiSettingsSchema } },
    },
    // The request's tenant: `default` until tenants are told apart before authentication.
    async (request) => settings.get(request.tenant),
  );

  app.post(
    '/api/v1/ui/cr/format',
    {
      config: { capability: 'common', access: 'authenticated' },
      schema: {
        tags,
        summary: 'Normalize a pasted PKCS#10 certificate request',
        description: 'Takes PEM (CRLF, indented, one armor line missing) or bare base64 of the DER; answers the PEM and the request\'s subject, key and SANs. Unreadable input or another kind of object: 400 with the PKI decoders\' code (PKI-001, PKI-002…).',
        body: formatBodySchema,
        response: { 200: formatAnswerSchema, 400: problem },
      },
    },
    async (request) => {
      const { csr } = request.body as { csr: string };
      const info = await parseCsrPemOffThread(tidyPastedPem(csr));
      return { pem: info.pem, subject: info.dn, dnElements: info.dnElements, ...describeKey(info.keyType), sans: info.sans, signatureValid: info.signatureValid };
    },
  );
}
