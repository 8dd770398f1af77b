import type { Knex } from 'knex';
import type { ConfigObject, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';
import { isUniqueViolation } from '../../db/unique.js';
import type { GroupInput, GroupStore, Stored } from './group-store.js';

/**
 * A role or team store seen as a configuration type's store (core/config-objects): the registry reads and
 * writes the group's own table (security_roles, security_teams, read by the principal resolver) and the
 * store keeps its memberships (deleted with the group; a team's managers). `body` is the object as the API
 * answers it, without `_id`; the registry hands back the same shape, normalised by the type's hook.
 */
export function groupConfigStore<T extends GroupInput>(groups: GroupStore<T>, body: (group: Stored<T>) => ConfigObject): ConfigTypeStore {
  const stored = (g: Stored<T>): StoredConfigObject => ({ id: g.id, name: g.name, body: body(g), createdAt: g.createdAt, updatedAt: g.updatedAt });
  return {
    list: async (tenant, db) => (await groups.list(tenant, db as Knex)).map(stored),
    get: async (tenant, name, db) => {
      const found = await groups.find(db as Knex, tenant, name);
      return found ? stored(found) : null;
    },
    insert: async (tenant, _name, input, db) => {
      try {
        return stored(await groups.insert(db as Knex, tenant, input as unknown as T));
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },
    update: async (tenant, _name, input, db) => (await groups.replace(db as Knex, tenant, input as unknown as T)) !== null,
    remove: (tenant, name, db) => groups.delete(db as Knex, tenant, name),
  };
}
