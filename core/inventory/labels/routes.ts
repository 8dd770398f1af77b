import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectionAccess, mountOwnDelete } from '../../config-objects/own-routes.js';
import { localizedInput, localizedOutput } from '../../http/localized-text.js';
import type { InventoryContext } from '../index.js';
import type { Label, LabelInput } from './store.js';

/*
 * Labels are on the configuration registry (config-type.ts: export/import, the cookbook, profiles' label rules
 * as references) and these routes stay theirs for now: a malformed body answers HTTP-003 here (tested in
 * labels.test.ts), the standard set would answer LBL-002. With `unknownFields: 'ignore'` and `events.byStore`
 * nothing else keeps them from the standard set.
 */

const ACCESS = collectionAccess('labels');
const BASE = '/api/v1/certificate/labels/';
const tags = ['labels'];

const labelSchema = {
  type: 'object',
  required: ['_id', 'name', 'regex', 'displayName', 'description'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    regex: { type: ['string', 'null'], description: 'Values must match it whole; null: any value' },
    displayName: localizedOutput,
    description: localizedOutput,
  },
} as const;

/** `_id` (echoed from a GET) and unknown fields are tolerated; the name's and regex's rules are the store's (LBL-002). */
const inputSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    _id: {},
    name: { type: 'string', description: '1 to 191 of A-Z a-z 0-9 . _ -' },
    regex: { type: ['string', 'null'], description: 'JavaScript regular expression the whole value must match, at most 1024 characters' },
    displayName: localizedInput,
    description: localizedInput,
  },
} as const;

const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 191 } } } as const;

interface Body {
  name: string;
  regex?: string | null;
  displayName?: LabelInput['displayName'];
  description?: LabelInput['description'];
}

const input = (b: Body): LabelInput => ({ name: b.name, regex: b.regex ?? null, displayName: b.displayName ?? [], description: b.description ?? [] });

/**
 * /api/v1/certificate/labels/: the standard set (PUT updates the label named in the body). A label
 * must be defined before a certificate carries it; one carried by certificates cannot be deleted.
 */
export async function labelRoutes(app: FastifyInstance, ctx: InventoryContext): Promise<void> {
  const labels = ctx.repository.labels;
  const record = (request: FastifyRequest, code: string, label: Pick<Label, 'name'> & { regex?: string | null }) =>
    ctx.events.append({
      tenant: request.tenant,
      code,
      module: 'inventory',
      status: 'success',
      principal: request.principal!.identifier,
      objectType: 'label',
      objectId: label.name,
      payload: label.regex === undefined ? {} : { regex: label.regex },
    });

  app.get(BASE, {
    config: ACCESS.read,
    schema: { tags, summary: 'List labels', response: { 200: { type: 'array', items: labelSchema } } },
    handler: async (request) => labels.list(request.tenant),
  });

  app.get<{ Params: { name: string } }>(`${BASE}:name`, {
    config: ACCESS.read,
    schema: { tags, summary: 'Get a label', params, response: { 200: labelSchema } },
    handler: async (request) => labels.get(request.tenant, request.params.name),
  });

  app.post<{ Body: Body }>(BASE, {
    config: ACCESS.write,
    schema: { tags, summary: 'Create a label', body: inputSchema, response: { 201: labelSchema } },
    handler: async (request, reply) => {
      const label = await labels.create(request.tenant, input(request.body));
      await record(request, 'LABEL-CREATED', label);
      return reply.code(201).send(label);
    },
  });

  app.put<{ Body: Body }>(BASE, {
    config: ACCESS.write,
    schema: { tags, summary: 'Update the label named in the body', body: inputSchema, response: { 200: labelSchema } },
    handler: async (request) => {
      const label = await labels.update(request.tenant, input(request.body));
      await record(request, 'LABEL-UPDATED', label);
      return label;
    },
  });

  // Refused while a profile's label rules name it; certificates carrying it are the store's own check.
  mountOwnDelete(app, {
    base: BASE,
    section: 'labels',
    type: 'label',
    tags,
    summary: 'Delete a label no certificate carries and no profile names',
    params,
    remove: async (request, name) => {
      await labels.remove(request.tenant, name);
      await record(request, 'LABEL-DELETED', { name });
    },
  });
}
