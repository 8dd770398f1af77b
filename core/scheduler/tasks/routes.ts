import type { FastifyInstance } from 'fastify';
import type { TaskInput } from './repository.js';
import type { TaskService } from './service.js';

const READ = { permission: 'configuration:scheduler:read' } as const;
const WRITE = { permission: 'configuration:scheduler:write' } as const;

const resultSchema = {
  type: ['object', 'null'],
  properties: { status: { type: 'string', enum: ['success', 'failure'] }, summary: { type: 'string' }, details: { type: 'object', additionalProperties: true } },
} as const;

const taskSchema = {
  $id: 'ScheduledTask',
  type: 'object',
  required: ['_id', 'name', 'type', 'cron', 'timezone', 'enabled', 'parameters', 'lastRun', 'nextRun', 'lastResult'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    category: { type: ['string', 'null'], enum: ['lifecycle', 'reporting', null] },
    cron: { type: 'string' },
    timezone: { type: 'string' },
    enabled: { type: 'boolean' },
    parameters: { type: 'object', additionalProperties: true },
    description: { type: ['string', 'null'] },
    lastRun: { type: ['integer', 'null'], description: 'epoch ms' },
    lastFinished: { type: ['integer', 'null'], description: 'epoch ms' },
    nextRun: { type: ['integer', 'null'], description: 'epoch ms' },
    lastResult: resultSchema,
  },
} as const;

/**
 * What a client sends. Server-owned fields a client may echo back from a GET (_id, lastRun…) are
 * accepted and ignored; anything else unknown is refused.
 */
const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'cron'],
  properties: {
    _id: { type: 'string' },
    id: { type: 'string' },
    name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
    type: { type: 'string', minLength: 1, maxLength: 64 },
    cron: { type: 'string', minLength: 1, maxLength: 255 },
    timezone: { type: 'string', minLength: 1, maxLength: 64, default: 'UTC' },
    enabled: { type: 'boolean', default: true },
    parameters: { type: 'object', default: {} },
    description: { type: ['string', 'null'], maxLength: 1024 },
    category: {},
    lastRun: {},
    lastFinished: {},
    nextRun: {},
    lastResult: {},
  },
} as const;

type Body = TaskInput & { _id?: string; id?: string };
const keyParams = { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, maxLength: 191 } } } as const;
const input = (b: Body): TaskInput => ({
  name: b.name,
  type: b.type,
  cron: b.cron.trim(),
  timezone: b.timezone,
  enabled: b.enabled,
  parameters: b.parameters,
  description: b.description ?? null,
});
const tags = ['scheduler'];

/** /api/v1/scheduler/tasks/: GET, GET :key, GET :key/run, POST, PUT, DELETE :key (`:key` = name or id). */
export async function taskRoutes(app: FastifyInstance, opts: { tasks: TaskService }): Promise<void> {
  const { tasks } = opts;
  app.addSchema(taskSchema);
  const one = { 200: { $ref: 'ScheduledTask#' } };

  app.get('/api/v1/scheduler/tasks/', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'List scheduled tasks', response: { 200: { type: 'array', items: { $ref: 'ScheduledTask#' } } } },
    handler: (request) => tasks.list(request.tenant),
  });

  app.get<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get a scheduled task by name or id', params: keyParams, response: one },
    handler: (request) => tasks.get(request.tenant, request.params.key),
  });

  app.get<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key/run', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Run a scheduled task now (answers at once; the run is recorded as its last result)', params: keyParams, response: { 202: { $ref: 'ScheduledTask#' } } },
    handler: async (request, reply) => reply.code(202).send(await tasks.runNow(request.tenant, request.params.key)),
  });

  app.post<{ Body: Body }>('/api/v1/scheduler/tasks/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Create a scheduled task', body: inputSchema, response: { 201: { $ref: 'ScheduledTask#' } } },
    handler: async (request, reply) => reply.code(201).send(await tasks.create(request.tenant, input(request.body))),
  });

  app.put<{ Body: Body }>('/api/v1/scheduler/tasks/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Update a scheduled task (named by _id, or by name)', body: inputSchema, response: one },
    handler: (request) => tasks.update(request.tenant, request.body._id ?? request.body.id ?? request.body.name, input(request.body)),
  });

  app.delete<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete a scheduled task', params: keyParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await tasks.remove(request.tenant, request.params.key);
      return reply.code(204).send();
    },
  });
}
