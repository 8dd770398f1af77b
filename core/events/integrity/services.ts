import type { Knex } from 'knex';
import type { SecretBox } from '../../secrets/index.js';
import type { EventStore } from '../store.js';
import { Checkpoints } from './checkpoints.js';
import { IntegrityRuns } from './runs.js';
import { SigningKeys } from './signing-keys.js';

export interface IntegrityServices {
  events: EventStore;
  keys: SigningKeys;
  checkpoints: Checkpoints;
  runs: IntegrityRuns;
}

/** The integrity services over one database: the kernel's (jobs and routes) and the CLI's (export). */
export function createIntegrityServices(deps: { knex: Knex; events: EventStore; secrets: SecretBox; clock: () => number; abandonedAfterMs: number }): IntegrityServices {
  const keys = new SigningKeys(deps.knex, deps.secrets, deps.clock);
  return {
    events: deps.events,
    keys,
    checkpoints: new Checkpoints(deps.knex, deps.events, keys, deps.clock),
    runs: new IntegrityRuns(deps.knex, deps.clock, deps.abandonedAfterMs),
  };
}
