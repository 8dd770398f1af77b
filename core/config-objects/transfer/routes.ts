import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigRegistry, RegisteredType } from '../registry.js';
import { actorOf } from '../routes.js';
import { transferSchemas, transferValidators } from './document.js';
import { exportCatalogue, exportDocument, readPermission, writePermission, type TransferAccess } from './export.js';
import { conflictCount, importDocument, importRefusal } from './import.js';

/** Bodies are validated by transfer/document.ts, so a malformed document answers CONFIG-002 naming what is wrong. */
const noFastifyValidation = () => () => true;

/**
 * Open to any authenticated principal: what each caller may export or import is decided per type from
 * its `configuration:<section>:read|write` rights (a type it may not read is absent from the catalogue
 * and the export; a type it may not write is a conflict of the import), so one document can span sections.
 */
const config = { capability: 'configuration', access: 'authenticated' } as const;
const tags = ['system'];

const accessOf = (request: FastifyRequest): TransferAccess => {
  const permissions = request.principal!.permissions;
  return { canRead: (t: RegisteredType) => permissions.allows(readPermission(t)), canWrite: (t: RegisteredType) => permissions.allows(writePermission(t)) };
};

/** /api/v1/system/configurations/: export and import of every configuration type (Horizon's routes). */
export function transferRoutes(app: FastifyInstance, registry: ConfigRegistry): void {
  const schemas = transferSchemas(registry);
  const validators = transferValidators(schemas);
  const base = '/api/v1/system/configurations';

  app.get(`${base}/export`, {
    config,
    schema: {
      tags,
      summary: 'List what the caller may export',
      description: 'Every object of every configuration type the caller may read, by export key (`{name, description?}`).',
      response: { 200: schemas.catalogue },
    },
    handler: (request) => exportCatalogue(registry, request.tenant, accessOf(request)),
  });

  app.post(`${base}/export`, {
    config,
    validatorCompiler: noFastifyValidation,
    schema: {
      tags,
      summary: 'Export configuration objects',
      description:
        'The selected objects (`{<exportKey>: [{name}]}`; none selected: everything the caller may read) as a document another instance imports. ' +
        'Secret fields are left out, or sealed under `passphrase` (PBKDF2-SHA256, AES-256-GCM): never in clear.',
      body: schemas.selection,
      response: { 200: schemas.exported },
    },
    handler: async (request) => exportDocument(registry, request.tenant, validators.parseSelection(request.body), accessOf(request)),
  });

  app.post(`${base}/import`, {
    config,
    validatorCompiler: noFastifyValidation,
    schema: {
      tags,
      summary: 'Import configuration objects (dryRun: report only)',
      description:
        'Creates or updates every object of an export document in one transaction, each type after those it references: all or nothing. ' +
        'Each object is reported as create, update (with the changed fields), unchanged or conflict (with the reason); any conflict refuses ' +
        'the whole import (CONFIG-005, carrying the report). `dryRun: true` reports without writing. Secrets sealed in the document need its `passphrase`; ' +
        'secrets left out keep the current value.',
      body: schemas.document,
      response: {
        200: {
          type: 'object',
          required: ['dryRun', 'applied', 'items', 'imported'],
          properties: {
            dryRun: { type: 'boolean' },
            applied: { type: 'boolean' },
            items: {
              type: 'object',
              additionalProperties: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'action'],
                  properties: {
                    name: { type: 'string' },
                    action: { type: 'string', enum: ['create', 'update', 'unchanged', 'conflict'] },
                    changed: { type: 'array', items: { type: 'string' } },
                    reason: { type: 'string' },
                  },
                },
              },
            },
            imported: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
    handler: async (request) => {
      const parsed = validators.parseImport(request.body);
      const result = await importDocument(registry, request.tenant, parsed, accessOf(request), actorOf(request));
      if (!result.dryRun && conflictCount(result) > 0) throw importRefusal(result);
      return result;
    },
  });
}
