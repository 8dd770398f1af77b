import type { Knex } from 'knex';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { unlessTaken } from '../../config-objects/store-adapter.js';
import { HORIZON_SERVER_KEYS } from './horizon.js';
import { REPORT_TASK } from './report/parameters.js';
import type { ScheduledTask, TaskInput, TaskRepository } from './repository.js';
import type { TaskService } from './service.js';

/** The task as its POST takes it (Certwright's form), without its run state. */
const body = (t: ScheduledTask): ConfigObject => ({
  name: t.name,
  type: t.type,
  cron: t.cron,
  timezone: t.timezone,
  enabled: t.enabled,
  parameters: t.parameters,
  description: t.description,
});
const stored = (t: ScheduledTask): StoredConfigObject => ({ id: t.id, name: t.name, body: body(t), createdAt: t.createdAt, updatedAt: t.updatedAt });
const input = (o: ConfigObject): TaskInput => ({
  name: o.name as string,
  type: o.type as string,
  cron: o.cron as string,
  timezone: o.timezone as string,
  enabled: o.enabled as boolean,
  parameters: o.parameters as Record<string, unknown>,
  description: (o.description as string | null | undefined) ?? null,
});

/** The tasks' own table (scheduled_tasks, read by the task job), by name. */
function taskStore(repo: TaskRepository): ConfigTypeStore {
  return {
    list: async (tenant, db) => (await repo.list(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repo.findByName(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, object, db) => unlessTaken(async () => stored(await repo.insert(tenant, input(object), db as Knex))),
    update: async (tenant, name, object, db) => {
      const current = await repo.findByName(tenant, name, db as Knex);
      if (!current) return false;
      await repo.update(tenant, current.id, input(object), db as Knex);
      return true;
    },
    remove: async (tenant, name, db) => {
      const current = await repo.findByName(tenant, name, db as Knex);
      if (!current) return false;
      await repo.remove(tenant, current.id, db as Knex);
      return true;
    },
  };
}

/** A report task's recipients name teams (team_contact, team_manager, team_members): references. */
const teamsOf = (list: string) => ({ field: `parameters.${list}.team`, type: 'team', many: true }) as const;

/**
 * Scheduled tasks (/api/v1/scheduler/tasks/) on the configuration registry, for export/import, the cookbook and
 * reference checks; routes.ts keeps their routes. The portable form is Certwright's (a type's fields in
 * `parameters`), without run state. Saved as the routes save them: the task type's schema and checks
 * (SCHED-002), and the task's job planned (or cancelled) once the change is committed.
 */
export function scheduledTaskType(tasks: TaskService, repo: TaskRepository): ConfigObjectType {
  return {
    type: 'scheduled-task',
    title: 'Scheduled tasks',
    noun: 'scheduled task',
    exportKey: 'scheduledTasks',
    description: 'Tasks of a registered type (`report` is built in) run on a CRON or Quartz expression in a time zone, once per occurrence whatever the number of nodes.',
    basePath: '/api/v1/scheduler/tasks/',
    tag: 'scheduler',
    section: 'scheduler',
    errorFamily: 'SCHED',
    routes: 'own',
    update: 'replace',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' },
      type: { type: 'string', minLength: 1, maxLength: 64, description: 'A registered task type (`report` is built in)' },
      cron: { type: 'string', minLength: 1, maxLength: 255, description: 'cron (5 fields, or 6 with seconds) or Quartz (6 or 7 fields, ? in day-of-month or day-of-week)' },
      timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'UTC when absent' },
      enabled: { type: 'boolean', description: 'true when absent' },
      parameters: { type: 'object', description: "The type's parameters, checked by its schema ({} when absent)" },
      description: { type: ['string', 'null'], maxLength: 1024 },
    },
    required: ['name', 'type', 'cron'],
    // What a GET answers besides the task (run state, Horizon's names of it): accepted, never stored.
    serverOwned: ['id', 'category', 'lastRun', 'lastFinished', 'nextRun', 'lastResult', 'createdAt', 'updatedAt', ...HORIZON_SERVER_KEYS],
    // A lifecycle task names its automation policy.
    references: [teamsOf('recipients'), teamsOf('cc'), teamsOf('bcc'), { field: 'parameters.policy', type: 'automation-policy' }],
    store: taskStore(repo),
    hooks: {
      // The defaults the routes' schema fills in, and the parameters' own (as a save through the routes stores them).
      normalize: (object) => ({
        name: object.name,
        type: object.type,
        cron: (object.cron as string).trim(),
        timezone: object.timezone ?? 'UTC',
        enabled: object.enabled ?? true,
        parameters: tasks.withDefaults(object.type as string, (object.parameters as Record<string, unknown> | undefined) ?? {}),
        description: object.description ?? null,
      }),
      validate: async (object, { tenant, db, caller }) => {
        // As the routes' rule (routes.ts mayAuthor): a report mails every certificate its query matches, so
        // importing one needs what reading all of them needs.
        if (object.type === REPORT_TASK && caller && !caller.holdsUnfiltered('search:certificates')) {
          return 'type: a report task mails every certificate its query matches: importing one needs search:certificates with no filter';
        }
        return (await tasks.problemOf(tenant, input(object), db as Knex)) ?? undefined;
      },
      afterChange: async ({ op, name }, { tenant }) => {
        if (op === 'delete') await tasks.forgetRemoved();
        else await tasks.replan(tenant, name);
      },
    },
  };
}
