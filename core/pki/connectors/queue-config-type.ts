import type { Knex } from 'knex';
import { unlessTaken } from '../../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import { DEFAULT_QUEUE, type QueueRecord } from './model.js';
import { checkQueue, mergeQueue, type QueueInput } from './queue-input.js';
import { queueView, type ConnectorRepository } from './repository.js';
import { queueInputSchema } from './schemas.js';

/** A queue in its portable form: its view (what POST accepts) without `_id`, timestamps or its run `state`. */
const PORTABLE = ['name', 'description', 'retries', 'initialDelaySeconds', 'maxDelaySeconds', 'paused', 'size', 'throttleParallelism', 'throttleDuration', 'clusterWide'] as const;
const body = (q: QueueRecord): ConfigObject => {
  const shown = queueView(q, undefined);
  return Object.fromEntries(PORTABLE.map((field) => [field, shown[field]]));
};

const stored = (q: QueueRecord): StoredConfigObject => ({ id: q.id, name: q.name, body: body(q), createdAt: q.createdAt, updatedAt: q.updatedAt });

/** The queues' own table (pki_queues, read by the gateway), on the registry's handle; no event (the registry writes it). */
function queueStore(repository: ConnectorRepository): ConfigTypeStore {
  return {
    list: async (tenant, db) => (await repository.listQueuesOn(db as Knex, tenant)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repository.findQueue(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, input, db, by) => unlessTaken(async () => stored(await repository.insertQueue(db as Knex, tenant, checkQueue(mergeQueue(input as unknown as QueueInput)), by ?? null))),
    update: async (tenant, _name, input, db, by) => {
      await repository.replaceQueue(db as Knex, tenant, checkQueue(mergeQueue(input as unknown as QueueInput)), by ?? null);
      return true;
    },
    remove: async (tenant, name, db) => {
      await repository.deleteQueue(db as Knex, tenant, name);
      return true;
    },
  };
}

/** What a GET answers beside the queue's fields (echoed back by read-modify-write clients). */
const ECHOED = ['_id', 'createdAt', 'updatedAt', 'state'];
/** The input fields of a queue: the route's schema without what a GET echoes back. */
const properties = Object.fromEntries(Object.entries(queueInputSchema.properties).filter(([field]) => !ECHOED.includes(field)));

/**
 * PKI queues (/api/v1/pki/queues/) on the configuration registry for export/import, the cookbook and
 * reference checks; routes.ts keeps serving them (their answers carry the queue's run `state`). Their own
 * table, PKI-QUEUE-* codes and events, a PUT keeping what it leaves out (`merge`), Horizon's rules checked
 * by queue-input.ts, the built-in `default` queue (always there, never deleted), and a change applied to the
 * gateway's trusted copy of the queue's rules on this node at once.
 */
export function pkiQueueType(repository: ConnectorRepository): ConfigObjectType {
  return {
    type: 'pki-queue',
    title: 'PKI queues',
    noun: 'PKI queue',
    exportKey: 'pkiQueues',
    description: 'Retry and throttle settings of the work PKI connectors could not finish at once; the built-in queue `default` always exists.',
    basePath: '/api/v1/pki/queues/',
    tag: 'pki-connectors',
    section: 'pki',
    errorFamily: 'PKI-QUEUE',
    routes: 'own',
    update: 'merge',
    events: { module: 'pki', created: 'PKI-QUEUE-CREATED', updated: 'PKI-QUEUE-UPDATED', deleted: 'PKI-QUEUE-DELETED' },
    properties,
    required: ['name'],
    serverOwned: ECHOED.filter((field) => field !== '_id'),
    store: queueStore(repository),
    hooks: {
      // The defaults of a POST; only the queue's own fields are stored.
      normalize: (object) => mergeQueue(object as unknown as QueueInput) as unknown as ConfigObject,
      validate(object) {
        try {
          checkQueue(object as unknown as ReturnType<typeof mergeQueue>);
        } catch (err) {
          if (err instanceof ProblemError && err.code === 'PKI-QUEUE-002') return err.detail ?? err.message;
          throw err;
        }
      },
      async beforeDelete(name, context) {
        if (name === DEFAULT_QUEUE) throw new ProblemError('PKI-QUEUE-002', { message: 'The built-in queue "default" cannot be deleted' });
        if (await repository.hasItems(context.db as Knex, context.tenant, name)) return `The PKI queue "${name}" still holds queued items`;
      },
      afterChange({ name }, context) {
        repository.forgetQueueRules(context.tenant, name);
      },
    },
  };
}
