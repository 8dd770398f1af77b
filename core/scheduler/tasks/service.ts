import { Ajv, type ValidateFunction } from 'ajv';
import type { TaskType } from '@certwright/sdk';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ProblemError } from '../../errors/index.js';
import type { EventStore } from '../../events/store.js';
import type { ProvidedRegistry } from '../../plugins/provided.js';
import type { Scheduler } from '../scheduler.js';
import { isChecked } from './checked-type.js';
import { isTimeZone, nextCronOccurrence, schedulerCron } from './cron.js';
import type { ScheduledTask, TaskInput, TaskRepository, TaskResultRecord } from './repository.js';

/** The one Agenda job every scheduled task runs as; its data names the task. */
export const TASK_JOB = 'scheduled-task';

export interface TaskView {
  _id: string;
  name: string;
  type: string;
  category: string | null;
  cron: string;
  timezone: string;
  enabled: boolean;
  parameters: Record<string, unknown>;
  description: string | null;
  lastRun: number | null;
  lastFinished: number | null;
  nextRun: number | null;
  lastResult: TaskResultRecord | null;
}

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true });

/**
 * Scheduled tasks (spec "Scheduled task"): a task of a registered type runs on its CRON expression in its
 * time zone, as a repeating Agenda job, so it runs once per occurrence whatever the number of nodes.
 */
export class TaskService {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly repo: TaskRepository,
    private readonly scheduler: Scheduler,
    private readonly types: ProvidedRegistry<TaskType>,
    private readonly events: EventStore,
    private readonly logger: Logger,
    private readonly clock: () => number,
  ) {}

  /** Registers the job that runs tasks; called once at boot, before the scheduler starts. */
  defineJob(): void {
    this.scheduler.define<{ taskId: string; manual?: boolean }>(
      TASK_JOB,
      async ({ tenant, data }) => {
        const task = await this.repo.findById(tenant, data.taskId);
        // Deleted or disabled since the job was planned: nothing to run, and no reason to keep planning.
        if (!task) return void (await this.scheduler.cancel(TASK_JOB, { taskId: data.taskId }));
        if (!task.enabled && !data.manual) return;
        await this.execute(task, data.manual === true);
      },
      { concurrency: 4 },
    );
  }

  private async execute(task: ScheduledTask, manual: boolean): Promise<void> {
    await this.repo.markStarted(task.tenant, task.id, this.clock());
    const type = this.types.get(task.type);
    let result: TaskResultRecord;
    if (!type) {
      result = { status: 'failure', summary: `task type "${task.type}" is not installed` };
    } else {
      try {
        result = await type.run({
          tenant: task.tenant,
          taskName: task.name,
          parameters: task.parameters,
          logger: this.logger.child({ task: task.name, tenant: task.tenant }),
        });
      } catch (err) {
        result = { status: 'failure', summary: (err as Error).message || 'the task failed' };
      }
    }
    await this.repo.markFinished(task.tenant, task.id, this.clock(), result);
    await this.events.append({
      tenant: task.tenant,
      code: 'SCHEDULED-TASK-RUN',
      module: 'scheduler',
      status: result.status,
      objectType: 'scheduled-task',
      objectId: task.name,
      payload: { type: task.type, manual, summary: result.summary },
    });
  }

  async list(tenant: string): Promise<TaskView[]> {
    const tasks = await this.repo.list(tenant);
    // One read of the task jobs for the whole list, not one per task.
    const nextRuns = await this.scheduler.nextRunsByDataKey(TASK_JOB, 'taskId');
    return tasks.map((t) => this.viewWith(t, nextRuns.get(t.id) ?? null));
  }

  async get(tenant: string, key: string): Promise<TaskView> {
    return this.view(await this.require(tenant, key));
  }

  /** The stored task, if any (a PUT reads the parameters it replaces: horizon.ts parametersOf). */
  find(tenant: string, key: string): Promise<ScheduledTask | undefined> {
    return this.repo.findByKey(tenant, key);
  }

  async create(tenant: string, input: TaskInput): Promise<TaskView> {
    await this.validate(tenant, input);
    if (await this.repo.findByKey(tenant, input.name).then((t) => t?.name === input.name)) {
      throw new ProblemError('SCHED-004', { message: `A scheduled task named "${input.name}" already exists` });
    }
    const task = await this.repo.insert(tenant, input);
    await this.plan(task);
    return this.view(task);
  }

  /** PUT on the collection: the body names the task to update (by name, or by `_id` to rename it). */
  async update(tenant: string, key: string, input: TaskInput): Promise<TaskView> {
    await this.validate(tenant, input);
    const current = await this.require(tenant, key);
    if (input.name !== current.name) {
      const clash = await this.repo.findByKey(tenant, input.name);
      if (clash?.name === input.name) throw new ProblemError('SCHED-004', { message: `A scheduled task named "${input.name}" already exists` });
    }
    const task = await this.repo.update(tenant, current.id, input);
    await this.plan(task);
    return this.view(task);
  }

  async remove(tenant: string, key: string): Promise<void> {
    const task = await this.require(tenant, key);
    await this.repo.remove(tenant, task.id);
    await this.scheduler.cancel(TASK_JOB, { taskId: task.id });
  }

  /** After a change committed through the configuration registry (an import): the named task's job follows it. */
  async replan(tenant: string, name: string): Promise<void> {
    const task = await this.repo.findByName(tenant, name);
    if (task) await this.plan(task);
  }

  /** After a delete committed through the configuration registry: the jobs of tasks that are gone are cancelled. */
  async forgetRemoved(): Promise<void> {
    // The registry's afterChange has the name only; task ids are unique across tenants, so jobs are matched by id.
    const planned = [...(await this.scheduler.nextRunsByDataKey(TASK_JOB, 'taskId')).keys()].filter((id): id is string => typeof id === 'string');
    const kept = new Set(await this.repo.existingIds(planned));
    for (const taskId of planned) if (!kept.has(taskId)) await this.scheduler.cancel(TASK_JOB, { taskId });
  }

  /** Runs the task now, on whichever node picks the job up first; the answer does not wait for it. */
  async runNow(tenant: string, key: string): Promise<TaskView> {
    const task = await this.require(tenant, key);
    await this.scheduler.now(TASK_JOB, { taskId: task.id, manual: true }, { tenant });
    return this.view(task);
  }

  /** One repeating job per enabled task; none for a disabled one. */
  private async plan(task: ScheduledTask): Promise<void> {
    await this.scheduler.cancel(TASK_JOB, { taskId: task.id });
    // The expression as the scheduler reads it (a Quartz one converted); validate() made sure it converts.
    const cron = schedulerCron(task.cron);
    if (task.enabled && cron.ok) await this.scheduler.every(cron.cron, TASK_JOB, { taskId: task.id }, { tenant: task.tenant, timezone: task.timezone });
  }

  private async require(tenant: string, key: string): Promise<ScheduledTask> {
    const task = await this.repo.findByKey(tenant, key);
    if (!task) throw new ProblemError('SCHED-003', { message: `No scheduled task has the name or id "${key}"` });
    return task;
  }

  private async validate(tenant: string, input: TaskInput): Promise<void> {
    const problem = await this.problemOf(tenant, input);
    if (problem) throw new ProblemError('SCHED-002', { message: problem });
  }

  /** The parameters with the defaults of the type's schema filled in (as a save stores them). */
  withDefaults(type: string, parameters: Record<string, unknown>): Record<string, unknown> {
    const validate = this.validatorOf(type);
    if (!validate) return parameters;
    const out = structuredClone(parameters);
    validate(out);
    return out;
  }

  private validatorOf(type: string): ValidateFunction | undefined {
    const schema = this.types.get(type)?.parametersSchema;
    if (!schema) return undefined;
    let validate = this.validators.get(type);
    if (!validate) this.validators.set(type, (validate = ajv.compile(schema)));
    return validate;
  }

  /**
   * Why a task cannot be saved (SCHED-002's message, naming the field), or null: its time zone, CRON expression,
   * type and parameters (the type's schema, with its defaults filled in, and its own checks read on `db`).
   */
  async problemOf(tenant: string, input: TaskInput, db?: Knex): Promise<string | null> {
    if (!isTimeZone(input.timezone)) return `timezone: "${input.timezone}" is not a known time zone`;
    const cron = nextCronOccurrence(input.cron, input.timezone);
    if (!cron.ok) return `cron: "${input.cron}" is not a valid CRON expression (${cron.reason})`;
    const type = this.types.get(input.type);
    if (!type) {
      const known = this.types.types();
      return `type: "${input.type}" is not a registered task type${known.length ? ` (known: ${known.join(', ')})` : ' (none is installed)'}`;
    }
    const validate = this.validatorOf(input.type);
    if (validate && !validate(input.parameters)) {
      const e = validate.errors![0]!;
      return `parameters${e.instancePath.replace(/\//g, '.')}: ${e.message ?? 'is invalid'}`;
    }
    if (isChecked(type)) return type.check(tenant, input.parameters, db);
    return null;
  }

  private async view(task: ScheduledTask): Promise<TaskView> {
    return this.viewWith(task, task.enabled ? await this.scheduler.nextRunAt(TASK_JOB, { taskId: task.id }) : null);
  }

  /** The answer's shape; the next run is the planned job's, else the CRON expression's next occurrence. */
  private viewWith(task: ScheduledTask, plannedRun: number | null): TaskView {
    let nextRun: number | null = null;
    if (task.enabled) {
      nextRun = plannedRun;
      if (nextRun === null) {
        const next = nextCronOccurrence(task.cron, task.timezone, new Date(this.clock()));
        nextRun = next.ok ? next.next : null;
      }
    }
    return {
      _id: task.id,
      name: task.name,
      type: task.type,
      category: this.types.get(task.type)?.category ?? null,
      cron: task.cron,
      timezone: task.timezone,
      enabled: task.enabled,
      parameters: task.parameters,
      description: task.description,
      lastRun: task.lastRunAt,
      lastFinished: task.lastFinishedAt,
      nextRun,
      lastResult: task.lastResult,
    };
  }
}
