import type { Knex } from 'knex';
import { unlessTaken } from '../config-objects/store-adapter.js';
import type { ConfigObject, ConfigObjectType, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { usableCredential } from '../config-objects/types/credentials.js';
import { ProblemError } from '../errors/index.js';
import type { CoreServices } from '../services.js';
import type { Trigger } from './model.js';
import type { TriggerRepository } from './repository.js';
import { horizonProperties } from './horizon/schemas.js';
import { triggerInputSchema } from './schemas.js';
import { checkedTriggerOf } from './trigger-input.js';
import { secretFieldsOf, targetSchemaOf } from './validate.js';

type Services = Pick<CoreServices, 'provided' | 'plugins'>;

/** What a credential of each authentication type must be (as credentials.ts checks for the routes). */
const KIND = { basic: 'password', bearer: 'raw' } as const;

/** The trigger in Certwright's shape, as its POST takes it, its secret target fields open (the registry masks or seals them). */
function body(repository: TriggerRepository, t: Trigger): ConfigObject {
  return {
    name: t.name,
    description: t.description,
    enabled: t.enabled,
    channel: t.channel,
    target: repository.fullTarget(t),
    events: t.events,
    thresholds: t.thresholds,
    query: t.query,
    triggerType: t.triggerType,
    retries: t.retries,
  };
}

/**
 * The triggers' own table through their repository on the registry's handle (savepoints inside an import's
 * transaction), with their TRIGGER-* events (events.byStore). The repository seals the channel's secret
 * target fields itself (secretsInClear).
 */
function triggerStore(services: Services, repository: TriggerRepository): ConfigTypeStore {
  const stored = (t: Trigger): StoredConfigObject => ({ id: t.id, name: t.name, body: body(repository, t), createdAt: t.createdAt, updatedAt: t.updatedAt });
  return {
    secretsInClear: true,
    list: async (tenant, db) => (await repository.list(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => {
      const found = await repository.find(tenant, name, db as Knex);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, object, db, by) => unlessTaken(async () => stored(await repository.create(tenant, checkedTriggerOf(services, object), by ?? null, db as Knex)), 'TRG-004'),
    update: async (tenant, _name, object, db, by) => {
      await repository.update(tenant, checkedTriggerOf(services, object), by ?? null, db as Knex);
      return true;
    },
    remove: async (tenant, name, db) => {
      await repository.remove(tenant, name, null, db as Knex);
      return true;
    },
  };
}

/**
 * Triggers (/api/v1/triggers/) on the configuration registry: exported and imported in Certwright's shape,
 * their channel's secret target fields sealed or left out, the credential a REST trigger authenticates with
 * as a reference, in the cookbook. The routes stay theirs (routes.ts says why).
 */
export function triggerType(services: Services, repository: TriggerRepository): ConfigObjectType {
  const { name, description, enabled, channel, target, events, thresholds, query, triggerType: kind } = triggerInputSchema.properties;
  return {
    type: 'trigger',
    title: 'Triggers',
    noun: 'trigger',
    exportKey: 'triggers',
    description: 'Notifications sent through a channel (email, webhook, chat, …) on certificate and request events.',
    basePath: '/api/v1/triggers/',
    tag: 'triggers',
    section: 'triggers',
    errorFamily: 'TRG',
    routes: 'own',
    update: 'replace',
    events: { module: 'triggers', created: 'TRIGGER-CREATED', updated: 'TRIGGER-UPDATED', deleted: 'TRIGGER-DELETED', byStore: true },
    properties: { name, description, enabled, channel, target, events, thresholds, query, triggerType: kind, retries: horizonProperties.retries },
    required: ['name', 'channel', 'events'],
    references: [{ field: 'target.authentication.credentials', type: 'credential' }],
    store: triggerStore(services, repository),
    hooks: {
      secretsOf: (object) => (typeof object.channel === 'string' ? secretFieldsOf(targetSchemaOf(services, object.channel)).map((f) => `target.${f}`) : []),
      // The routes' checks: the channel's target, events, query (TRG-00x), and the credential's kind and targets.
      validate: async (object, { lookup }) => {
        try {
          const checked = checkedTriggerOf(services, object);
          const auth = checked.target.authentication as { type?: keyof typeof KIND; credentials?: string } | undefined;
          if (auth?.type && auth.credentials) {
            const usable = usableCredential(await lookup('credential', auth.credentials), auth.credentials, KIND[auth.type], 'trigger');
            if (!usable.ok) return `target.authentication.credentials: credential ${usable.reason}`;
          }
        } catch (err) {
          if (err instanceof ProblemError && err.status === 400) return err.detail ?? err.message;
          throw err;
        }
        return undefined;
      },
    },
  };
}
