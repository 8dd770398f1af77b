import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigRegistry } from '../config-objects/registry.js';
import { collectionAccess } from '../config-objects/own-routes.js';
import { usableCredential } from '../config-objects/types/credentials.js';
import { credentialKindOf, DATASOURCE_PROPERTIES, DATASOURCE_SECTION, DATASOURCE_TYPE, definitionProblem, KIND_SCHEMAS, withDefaults } from './config-type.js';
import { datasourceProblem, FetchFailure } from './errors.js';
import { DATASOURCE_KINDS, type Datasource, type DatasourceKind, type DatasourceRecord } from './model.js';
import type { DatasourceStatus } from './results.js';
import type { Datasources } from './service.js';
import { datasourceTemplate } from './templates.js';

const COLLECTION = '/api/v1/datasources/';
const FLOWS = '/api/v1/datasource/flows/';
const TAGS = ['datasources'];
/** Datasources one PATCH refreshes at most (each fetch is bounded by its own timeoutMs). */
const MAX_REFRESH = 50;
/** Fetches one PATCH runs at once. */
const REFRESH_CONCURRENCY = 4;
/** Records a flow answers: `limit` (default 100), at most 1000 (the count says how many were fetched). */
const FLOW_LIMIT = { default: 100, max: 1000 };

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
const noFastifyValidation = () => () => true;

const statusSchema = {
  type: 'object',
  required: ['name', 'status', 'fetchedAt', 'durationMs', 'error', 'succeededAt', 'records'],
  properties: {
    name: { type: 'string' },
    status: { type: 'string', enum: ['ok', 'failed', 'never'] },
    fetchedAt: { type: ['integer', 'null'], description: 'epoch ms of the last fetch' },
    durationMs: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'], description: 'failed: why' },
    succeededAt: { type: ['integer', 'null'], description: 'epoch ms of the fetch whose records rules read' },
    records: { type: 'integer', description: 'Records of the last fetch' },
  },
} as const;
const freeObject = { type: 'object', additionalProperties: true } as const;

const refreshBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    names: { type: 'array', maxItems: MAX_REFRESH, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 191 }, description: 'The datasources to fetch now (left out: every one)' },
    name: { type: 'string', minLength: 1, maxLength: 191, description: 'One datasource (same as names: [name])' },
  },
} as const;
const flowBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    datasource: { type: 'string', minLength: 1, maxLength: 191, description: 'A stored datasource: fetched, and its result recorded for rules' },
    definition: { type: 'object', description: 'An inline datasource definition (the collection\'s fields; name and keyField optional): fetched, nothing recorded' },
    limit: { type: 'integer', minimum: 0, maximum: FLOW_LIMIT.max, description: `Records answered (default ${FLOW_LIMIT.default})` },
  },
} as const;
const inlineDefinition = {
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: { ...DATASOURCE_PROPERTIES, _id: { type: 'string' } },
} as const;
const templateBody = { type: 'object', additionalProperties: false, required: ['kind'], properties: { kind: { type: 'string', enum: [...DATASOURCE_KINDS] } } } as const;

const validators = { refresh: ajv.compile(refreshBody), flow: ajv.compile(flowBody), inline: ajv.compile(inlineDefinition), template: ajv.compile(templateBody) };

/**
 * Datasource routes beyond the registry's standard set (spec "Configuration capability": Datasources, PATCH on
 * the collection; Datasource flows, POST and POST template). PATCH fetches the named datasources now and answers
 * their status (a failure is recorded and answered, not thrown: one bad source does not hide the others); a
 * flow fetches one datasource — stored, or an inline definition to try one before saving it — and answers its
 * records, or DATASOURCE-006 (422) saying why it could not. Fetching reaches out of the platform, so it takes
 * the section's write permission; the template only describes.
 */
export function mountDatasourceRoutes(app: FastifyInstance, registry: ConfigRegistry, datasources: Datasources): void {
  const access = collectionAccess(DATASOURCE_SECTION);
  const type = () => registry.get(DATASOURCE_TYPE)!;
  const invalid = (message: string) => registry.problem(type(), 'invalid', message);
  const unknown = (name: string) => registry.problem(type(), 'unknown', `No datasource is named "${name}"`);
  const check = <T>(validate: (typeof validators)[keyof typeof validators], body: unknown): T => {
    if (!validate(body ?? {})) {
      const e = validate.errors![0]!;
      const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
      const field = e.keyword === 'additionalProperties' ? `${at ? `${at}.` : ''}${(e.params as { additionalProperty: string }).additionalProperty}: is not a known field` : e.keyword === 'required' ? `${at ? `${at}.` : ''}${(e.params as { missingProperty: string }).missingProperty}: is required` : `${at || '(body)'}: ${e.message ?? 'is not valid'}`;
      throw invalid(field);
    }
    return (body ?? {}) as T;
  };

  app.patch(COLLECTION, {
    config: access.write,
    validatorCompiler: noFastifyValidation,
    schema: {
      tags: TAGS,
      summary: 'Fetch the named datasources now (all when none is named) and answer their status',
      body: refreshBody,
      response: { 200: { type: 'array', items: statusSchema } },
    },
    handler: async (request) => {
      const body = check<{ names?: string[]; name?: string }>(validators.refresh, request.body);
      const names = body.names ?? (body.name !== undefined ? [body.name] : (await datasources.names(request.tenant)).slice(0, MAX_REFRESH));
      // Every name is checked before anything is fetched: a typo fetches nothing.
      const found: Datasource[] = [];
      for (const name of names) {
        const d = await datasources.definition(request.tenant, name);
        if (!d) throw unknown(name);
        found.push(d);
      }
      // A few at a time: each fetch waits on its source up to its own timeoutMs.
      const out: DatasourceStatus[] = new Array(found.length);
      let next = 0;
      const worker = async () => {
        while (next < found.length) {
          const i = next++;
          out[i] = (await datasources.refresh(request.tenant, found[i]!)).status;
        }
      };
      await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, found.length) }, worker));
      return out;
    },
  });

  app.post(FLOWS, {
    config: access.write,
    validatorCompiler: noFastifyValidation,
    schema: {
      tags: TAGS,
      summary: 'Run a datasource flow now: fetch a stored datasource (its result recorded) or an inline definition, and answer its records',
      body: flowBody,
      response: {
        200: {
          type: 'object',
          required: ['datasource', 'kind', 'status', 'count', 'truncated', 'durationMs', 'records'],
          properties: {
            datasource: { type: 'string' },
            kind: { type: 'string' },
            status: { type: 'string', enum: ['ok'] },
            count: { type: 'integer', description: 'Records fetched' },
            truncated: { type: 'boolean', description: 'true: more records were fetched than answered (limit)' },
            durationMs: { type: 'integer' },
            records: { type: 'array', items: freeObject },
          },
        },
      },
    },
    handler: async (request) => {
      const body = check<{ datasource?: string; definition?: Record<string, unknown>; limit?: number }>(validators.flow, request.body);
      if ((body.datasource === undefined) === (body.definition === undefined)) throw invalid('give one of datasource (a stored datasource\'s name) or definition (an inline datasource)');
      const limit = body.limit ?? FLOW_LIMIT.default;
      let d: Datasource;
      let records: DatasourceRecord[];
      let durationMs: number;
      if (body.datasource !== undefined) {
        const stored = await datasources.definition(request.tenant, body.datasource);
        if (!stored) throw unknown(body.datasource);
        d = stored;
        const refreshed = await datasources.refresh(request.tenant, d);
        if (!refreshed.records) throw datasourceProblem('DATASOURCE-006', `Datasource "${d.name}": ${refreshed.status.error ?? 'the fetch failed'}`);
        records = refreshed.records;
        durationMs = refreshed.status.durationMs ?? 0;
      } else {
        d = await inline(request, body.definition!);
        try {
          ({ records, durationMs } = await datasources.fetch(request.tenant, d));
        } catch (err) {
          if (err instanceof FetchFailure) throw datasourceProblem('DATASOURCE-006', `Datasource "${d.name}": ${err.message}`);
          throw err;
        }
      }
      return { datasource: d.name, kind: d.kind, status: 'ok', count: records.length, truncated: records.length > limit, durationMs, records: records.slice(0, limit) };
    },
  });

  app.post(`${FLOWS}template`, {
    config: access.read,
    validatorCompiler: noFastifyValidation,
    schema: {
      tags: TAGS,
      summary: 'The skeleton of a datasource of a kind (http, ldap, database), as a form prefills it, with the JSON Schema of its settings',
      body: templateBody,
      response: { 200: { type: 'object', required: ['kind', 'datasource', 'settingsSchema'], properties: { kind: { type: 'string' }, datasource: freeObject, settingsSchema: freeObject } } },
    },
    handler: async (request) => {
      const { kind } = check<{ kind: DatasourceKind }>(validators.template, request.body);
      return { kind, datasource: datasourceTemplate(kind), settingsSchema: KIND_SCHEMAS[kind] };
    },
  });

  /** An inline definition checked as a stored one would be (schema, settings, credential), defaults filled in. */
  async function inline(request: FastifyRequest, definition: Record<string, unknown>): Promise<Datasource> {
    if (!validators.inline(definition)) {
      const e = validators.inline.errors![0]!;
      const at = `definition${e.instancePath.replace(/\//g, '.')}`;
      if (e.keyword === 'additionalProperties') throw invalid(`${at}.${(e.params as { additionalProperty: string }).additionalProperty}: is not a known field`);
      throw invalid(`${at}: ${e.message ?? 'is not valid'}`);
    }
    const d = withDefaults({ name: 'inline', keyField: 'id', ...definition }) as unknown as Datasource;
    const problem = definitionProblem(d);
    if (problem) throw invalid(`definition.${problem}`);
    if (typeof d.credential === 'string') {
      const usable = usableCredential(await registry.resolve('credential', request.tenant, d.credential), d.credential, credentialKindOf(d), 'datasource');
      if (!usable.ok) throw invalid(`definition.credential: ${usable.reason}`);
    }
    return d;
  }
}
