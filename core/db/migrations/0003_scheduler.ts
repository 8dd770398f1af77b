import type { Knex } from 'knex';
import type { Migration } from '../migrator.js';

/**
 * Agenda's job store (core/scheduler/knex-backend), its job log, and the spec's scheduled tasks.
 * Dates are epoch milliseconds in BIGINT columns: one representation on SQLite, MySQL and PostgreSQL.
 */
/**
 * Job and task names compare exactly, as on SQLite and PostgreSQL: MySQL's default collation is
 * case-insensitive, which would make the jobs "Report" and "report" one.
 */
const exact = (knex: Knex, column: Knex.ColumnBuilder): Knex.ColumnBuilder =>
  knex.client.config.client === 'mysql2' ? column.collate('utf8mb4_bin') : column;

export const scheduler0003: Migration = {
  name: '0003_scheduler',
  async up(knex: Knex) {
    await knex.schema.createTable('scheduler_jobs', (t) => {
      t.string('id', 24).primary();
      exact(knex, t.string('name', 191).notNullable());
      t.integer('priority').notNullable().defaultTo(0);
      t.bigInteger('next_run_at').nullable();
      t.string('type', 10).notNullable().defaultTo('normal');
      // = name for type 'single' jobs, NULL otherwise: a unique index on it gives "one single job per
      // name" on every engine (NULLs never collide), like PostgreSQL's partial unique index.
      exact(knex, t.string('single_key', 191).nullable()).unique('scheduler_jobs_single_key_unique');
      t.bigInteger('locked_at').nullable();
      t.bigInteger('last_finished_at').nullable();
      t.bigInteger('failed_at').nullable();
      t.integer('fail_count').nullable();
      t.text('fail_reason').nullable();
      t.string('repeat_timezone', 100).nullable();
      t.bigInteger('last_run_at').nullable();
      t.string('repeat_interval', 255).nullable();
      t.text('data', 'longtext').nullable();
      t.string('repeat_at', 255).nullable();
      t.boolean('disabled').notNullable().defaultTo(false);
      t.float('progress').nullable();
      t.boolean('fork').notNullable().defaultTo(false);
      t.string('last_modified_by', 255).nullable();
      t.bigInteger('debounce_started_at').nullable();
      t.bigInteger('start_date').nullable();
      t.bigInteger('end_date').nullable();
      t.text('skip_days').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.index(['locked_at'], 'scheduler_jobs_locked_at');
      t.index(['next_run_at'], 'scheduler_jobs_next_run_at');
    });
    // Find-and-lock: the due jobs of one name in the order they are taken (next run, then highest
    // priority), so the locking read walks the index and stops at the first free row. knex's index
    // builder has no per-column direction; this statement is the same on SQLite, MySQL and PostgreSQL.
    await knex.raw('CREATE INDEX scheduler_jobs_due ON scheduler_jobs (name, disabled, locked_at, next_run_at, priority DESC)');

    await knex.schema.createTable('scheduler_job_logs', (t) => {
      t.bigIncrements('id').primary();
      t.bigInteger('timestamp').notNullable();
      t.string('level', 8).notNullable();
      t.string('event', 32).notNullable();
      t.string('job_id', 24).nullable();
      exact(knex, t.string('job_name', 191).notNullable());
      t.text('message').notNullable();
      t.integer('duration').nullable();
      t.text('error').nullable();
      t.integer('fail_count').nullable();
      t.integer('retry_delay').nullable();
      t.integer('retry_attempt').nullable();
      t.string('agenda_name', 191).nullable();
      t.text('meta').nullable();
      t.index(['job_id', 'timestamp'], 'scheduler_job_logs_job');
      t.index(['job_name', 'timestamp'], 'scheduler_job_logs_name');
      t.index(['timestamp'], 'scheduler_job_logs_time');
    });

    await knex.schema.createTable('scheduled_tasks', (t) => {
      t.string('id', 24).primary();
      t.string('tenant', 64).notNullable();
      exact(knex, t.string('name', 191).notNullable());
      t.string('type', 64).notNullable();
      t.string('cron', 255).notNullable();
      t.string('timezone', 64).notNullable();
      t.boolean('enabled').notNullable();
      t.text('parameters', 'longtext').notNullable();
      t.string('description', 1024).nullable();
      t.bigInteger('last_run_at').nullable();
      t.bigInteger('last_finished_at').nullable();
      t.string('last_status', 16).nullable();
      t.text('last_result').nullable();
      t.bigInteger('created_at').notNullable();
      t.bigInteger('updated_at').notNullable();
      t.unique(['tenant', 'name'], { indexName: 'scheduled_tasks_tenant_name' });
    });
  },
  async down(knex: Knex) {
    await knex.schema.dropTableIfExists('scheduled_tasks');
    await knex.schema.dropTableIfExists('scheduler_job_logs');
    await knex.schema.dropTableIfExists('scheduler_jobs');
  },
};
