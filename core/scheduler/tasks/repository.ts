import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';

export interface TaskResultRecord {
  status: 'success' | 'failure';
  summary: string;
  details?: Record<string, unknown>;
}

export interface ScheduledTask {
  id: string;
  tenant: string;
  name: string;
  type: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  parameters: Record<string, unknown>;
  description: string | null;
  lastRunAt: number | null;
  lastFinishedAt: number | null;
  lastResult: TaskResultRecord | null;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  tenant: string;
  name: string;
  type: string;
  cron: string;
  timezone: string;
  enabled: number | boolean;
  parameters: string;
  description: string | null;
  last_run_at: number | string | null;
  last_finished_at: number | string | null;
  last_status: string | null;
  last_result: string | null;
  created_at: number | string;
  updated_at: number | string;
}

const ms = (v: number | string | null): number | null => (v === null ? null : Number(v));

function fromRow(r: Row): ScheduledTask {
  return {
    id: r.id,
    tenant: r.tenant,
    name: r.name,
    type: r.type,
    cron: r.cron,
    timezone: r.timezone,
    enabled: Boolean(r.enabled),
    parameters: JSON.parse(r.parameters) as Record<string, unknown>,
    description: r.description,
    lastRunAt: ms(r.last_run_at),
    lastFinishedAt: ms(r.last_finished_at),
    lastResult: r.last_result === null ? null : (JSON.parse(r.last_result) as TaskResultRecord),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

export type TaskInput = Pick<ScheduledTask, 'name' | 'type' | 'cron' | 'timezone' | 'enabled' | 'parameters' | 'description'>;

const columns = (input: TaskInput) => ({
  name: input.name,
  type: input.type,
  cron: input.cron,
  timezone: input.timezone,
  enabled: input.enabled,
  parameters: JSON.stringify(input.parameters),
  description: input.description,
});

/** Rows of scheduled_tasks, always within one tenant; `db`: another handle (the registry's import transaction). */
export class TaskRepository {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string, db: Knex = this.knex): Promise<ScheduledTask[]> {
    return ((await db('scheduled_tasks').where({ tenant }).orderBy('name')) as Row[]).map(fromRow);
  }

  /** By id first (24 hex), then by name: the spec's `:key` is either. */
  async findByKey(tenant: string, key: string): Promise<ScheduledTask | undefined> {
    const rows = (await this.knex('scheduled_tasks')
      .where({ tenant })
      .andWhere((q) => q.where({ id: key }).orWhere({ name: key }))) as Row[];
    const row = rows.find((r) => r.id === key) ?? rows[0];
    return row ? fromRow(row) : undefined;
  }

  async findById(tenant: string, id: string, db: Knex = this.knex): Promise<ScheduledTask | undefined> {
    const row = (await db('scheduled_tasks').where({ tenant, id }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** By name only (the configuration registry's key). */
  async findByName(tenant: string, name: string, db: Knex = this.knex): Promise<ScheduledTask | undefined> {
    const row = (await db('scheduled_tasks').where({ tenant, name }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Which of these ids are tasks' (of any tenant). */
  async existingIds(ids: readonly string[]): Promise<string[]> {
    return ids.length === 0 ? [] : ((await this.knex('scheduled_tasks').whereIn('id', ids).pluck('id')) as string[]);
  }

  async insert(tenant: string, input: TaskInput, db: Knex = this.knex): Promise<ScheduledTask> {
    const now = this.clock();
    const id = newId(now);
    await db('scheduled_tasks').insert({ id, tenant, ...columns(input), created_at: now, updated_at: now });
    return (await this.findById(tenant, id, db))!;
  }

  async update(tenant: string, id: string, input: TaskInput, db: Knex = this.knex): Promise<ScheduledTask> {
    await db('scheduled_tasks')
      .where({ tenant, id })
      .update({ ...columns(input), updated_at: this.clock() });
    return (await this.findById(tenant, id, db))!;
  }

  async remove(tenant: string, id: string, db: Knex = this.knex): Promise<void> {
    await db('scheduled_tasks').where({ tenant, id }).delete();
  }

  async markStarted(tenant: string, id: string, at: number): Promise<void> {
    await this.knex('scheduled_tasks').where({ tenant, id }).update({ last_run_at: at });
  }

  async markFinished(tenant: string, id: string, at: number, result: TaskResultRecord): Promise<void> {
    await this.knex('scheduled_tasks')
      .where({ tenant, id })
      .update({ last_finished_at: at, last_status: result.status, last_result: JSON.stringify(result) });
  }
}
