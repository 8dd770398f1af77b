import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../../errors/index.js';
import { recordedWrite } from '../../config-objects/own-routes.js';
import { HORIZON_SERVER_KEYS, HORIZON_THIRDPARTY_KEYS, parametersOf, withHorizonKeys } from './horizon.js';
import { REPORT_KEYS, REPORT_PARAMETERS_SCHEMA, REPORT_TASK } from './report/parameters.js';
import type { TaskInput } from './repository.js';
import type { TaskService } from './service.js';

/*
 * Scheduled tasks are on the configuration registry (config-type.ts: export/import in Certwright's form, the
 * cookbook, references to teams), but these routes stay theirs: `:key` is a task's name or its id, GET :key/run
 * runs one, answers carry run state (lastRun, nextRun, status) and Horizon's flat report form, and a report
 * needs search:certificates with no filter to be saved.
 */

const READ = { permission: 'configuration:scheduler:read' } as const;
const WRITE = { permission: 'configuration:scheduler:write' } as const;

const resultSchema = {
  type: ['object', 'null'],
  properties: { status: { type: 'string', enum: ['success', 'failure'] }, summary: { type: 'string' }, details: { type: 'object', additionalProperties: true } },
} as const;

/** A report's fields as Horizon names them, flat (horizon.ts): in answers, the schemas of the parameters. */
const reportKeys = Object.fromEntries(
  REPORT_KEYS.map((k) => {
    const schema = REPORT_PARAMETERS_SCHEMA.properties[k] as Record<string, unknown>;
    return [k, { ...schema, description: `Horizon form of parameters.${k} (report tasks)${schema.description ? `: ${String(schema.description)}` : ''}` }];
  }),
);
/**
 * The same keys in a request: their JSON type only, or null (Horizon's clear_fields: "none", which
 * coerceTypes would otherwise turn into "" or false). Their content is checked with the parameters (SCHED-002
 * naming the field, as for Certwright's form), not here, where a problem would be a bare HTTP-003.
 */
const reportInputKeys = Object.fromEntries(
  REPORT_KEYS.map((k) => {
    const type = REPORT_PARAMETERS_SCHEMA.properties[k].type;
    return [k, { type: [...new Set([...([] as string[]).concat(type), 'null'])], description: `Horizon form of parameters.${k} (report tasks; schema as in ScheduledTask); null: none` }];
  }),
);

const taskSchema = {
  $id: 'ScheduledTask',
  type: 'object',
  required: ['_id', 'name', 'type', 'cron', 'timezone', 'enabled', 'parameters', 'lastRun', 'nextRun', 'lastResult'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    category: { type: ['string', 'null'], enum: ['lifecycle', 'reporting', null] },
    cron: { type: 'string', description: 'As written: cron (5 fields, or 6 with seconds) or Quartz (? in day-of-month or day-of-week, optional year *)' },
    timezone: { type: 'string' },
    enabled: { type: 'boolean' },
    parameters: { type: 'object', additionalProperties: true },
    description: { type: ['string', 'null'] },
    lastRun: { type: ['integer', 'null'], description: 'epoch ms' },
    lastFinished: { type: ['integer', 'null'], description: 'epoch ms' },
    nextRun: { type: ['integer', 'null'], description: 'epoch ms' },
    lastResult: resultSchema,
    // Horizon's names of the run state, for its clients.
    status: { type: ['string', 'null'], enum: ['success', 'failure', 'running', null], description: 'Horizon form: lastResult.status, or running' },
    lastExecutionDate: { type: ['integer', 'null'], description: 'Horizon form of lastRun (epoch ms)' },
    lastCompletionDate: { type: ['integer', 'null'], description: 'Horizon form of lastFinished (epoch ms)' },
    detail: { type: ['string', 'null'], description: 'Horizon form: lastResult.summary' },
    ...reportKeys,
  },
} as const;

const ignored = { description: 'Server-owned (answered by a GET): ignored' };
/**
 * What a client sends: Certwright's form ({name, type, cron, parameters…}) or Horizon's flat report
 * (horizon.ts). Server-owned fields a client may echo back from a GET (_id, lastRun…, Horizon's status…) are
 * accepted and ignored; Horizon's third-party task fields are accepted only to be refused by name (SCHED-002);
 * anything else unknown is refused.
 */
const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'cron'],
  properties: {
    _id: { type: 'string' },
    id: { type: 'string' },
    name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
    type: { type: 'string', minLength: 1, maxLength: 64, description: 'A registered task type (report is built in); Horizon type report maps onto it' },
    cron: { type: 'string', minLength: 1, maxLength: 255, description: 'cron (5 fields, or 6 with seconds) or Quartz (6 or 7 fields, ? in day-of-month or day-of-week, 1-7 = SUN-SAT, year * only)' },
    timezone: { type: 'string', minLength: 1, maxLength: 64, default: 'UTC' },
    enabled: { type: 'boolean', default: true },
    parameters: { type: 'object', description: "The type's parameters ({} when absent; report: the Horizon report fields, which may be sent flat instead)" },
    description: { type: ['string', 'null'], maxLength: 1024 },
    category: ignored,
    lastRun: ignored,
    lastFinished: ignored,
    nextRun: ignored,
    lastResult: ignored,
    ...Object.fromEntries(HORIZON_SERVER_KEYS.map((k) => [k, ignored])),
    ...Object.fromEntries(HORIZON_THIRDPARTY_KEYS.map((k) => [k, { description: "Horizon third-party task field: refused (SCHED-002), no such task type" }])),
    ...reportInputKeys,
  },
} as const;

type Body = Omit<TaskInput, 'parameters' | 'description'> & { _id?: string; id?: string; parameters?: Record<string, unknown>; description?: string | null } & Record<string, unknown>;
const keyParams = { type: 'object', required: ['key'], properties: { key: { type: 'string', minLength: 1, maxLength: 191 } } } as const;
/** The task a body describes; `stored`: the parameters of the task a PUT replaces (horizon.ts). */
const input = (b: Body, stored?: Record<string, unknown>): TaskInput => ({
  name: b.name,
  type: b.type,
  cron: b.cron.trim(),
  timezone: b.timezone,
  enabled: b.enabled,
  parameters: parametersOf(b, stored),
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
    handler: async (request) => (await tasks.list(request.tenant)).map(withHorizonKeys),
  });

  app.get<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key', {
    config: { capability: 'configuration', access: READ },
    schema: { tags, summary: 'Get a scheduled task by name or id', params: keyParams, response: one },
    handler: async (request) => withHorizonKeys(await tasks.get(request.tenant, request.params.key)),
  });

  app.get<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key/run', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Run a scheduled task now (answers at once; the run is recorded as its last result)', params: keyParams, response: { 202: { $ref: 'ScheduledTask#' } } },
    handler: async (request, reply) => reply.code(202).send(withHorizonKeys(await tasks.runNow(request.tenant, request.params.key))),
  });

  /**
   * A report runs with no caller and mails every certificate its query matches to the recipients its author
   * chose: saving one needs what reading all of them needs, search:certificates with no filter (else
   * configuration:scheduler:write would mail oneself the whole inventory).
   */
  const mayAuthor = (request: FastifyRequest, task: TaskInput): void => {
    if (task.type !== REPORT_TASK) return;
    if (request.principal?.permissions.filtersFor('search:certificates') !== null) {
      throw new ProblemError('SEC-PERM-001', { message: 'A report task mails every certificate its query matches: saving one needs search:certificates with no filter' });
    }
  };

  app.post<{ Body: Body }>('/api/v1/scheduler/tasks/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Create a scheduled task (Certwright form, or Horizon flat report form)', body: inputSchema, response: { 201: { $ref: 'ScheduledTask#' } } },
    handler: async (request, reply) => {
      const task = input(request.body);
      mayAuthor(request, task);
      return reply.code(201).send(withHorizonKeys(await recordedWrite(request, 'scheduled-task', 'create', task.name, () => tasks.create(request.tenant, task))));
    },
  });

  app.put<{ Body: Body }>('/api/v1/scheduler/tasks/', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Update a scheduled task (named by _id, or by name; either form)', body: inputSchema, response: one },
    handler: async (request) => {
      const key = request.body._id ?? request.body.id ?? request.body.name;
      const current = await tasks.find(request.tenant, key);
      const task = input(request.body, current?.parameters);
      mayAuthor(request, task);
      const updated = await recordedWrite(request, 'scheduled-task', 'update', current?.name ?? task.name, () => tasks.update(request.tenant, key, task), (t) => t.name);
      return withHorizonKeys(updated);
    },
  });

  app.delete<{ Params: { key: string } }>('/api/v1/scheduler/tasks/:key', {
    config: { capability: 'configuration', access: WRITE },
    schema: { tags, summary: 'Delete a scheduled task', params: keyParams, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      const current = await tasks.find(request.tenant, request.params.key);
      await recordedWrite(request, 'scheduled-task', 'delete', current?.name ?? request.params.key, () => tasks.remove(request.tenant, request.params.key));
      return reply.code(204).send();
    },
  });
}
