import type { Knex } from 'knex';
import type { CredentialsFacade } from '@certwright/sdk';
import type { Logger } from 'pino';
import type { CertwrightConfig } from './config/index.js';
import type { DatabaseEngine } from './db/connection.js';
import type { GroupCommit } from './db/group-commit.js';
import type { EventStore } from './events/store.js';
import type { InventoryContext } from './inventory/index.js';
import type { PluginManager } from './plugins/manager.js';
import type { ProvidedServices } from './plugins/provided.js';
import type { Scheduler } from './scheduler/scheduler.js';
import type { SecretBox } from './secrets/index.js';

/** What the kernel hands the domain modules that register after the inventory (events API, integrity, triggers). */
export interface CoreServices {
  config: CertwrightConfig;
  knex: Knex;
  engine: DatabaseEngine;
  /** Short write transactions of concurrent callers sharing commits (the enrollment hot path). */
  groupCommit: GroupCommit;
  clock: () => number;
  events: EventStore;
  logger: Logger;
  scheduler: Scheduler;
  secrets: SecretBox;
  provided: ProvidedServices;
  plugins: PluginManager;
  inventory: InventoryContext;
  /** Credentials by name (core/config-objects), read at the time of use. */
  credentials: CredentialsFacade;
  /**
   * This kernel will run jobs (scheduler.enabled, and not a CLI boot that starts nothing): only then does it
   * put recurring jobs in the schedule. A CLI command must not write the schedule, nor wait on its locks.
   */
  runsJobs: boolean;
}
