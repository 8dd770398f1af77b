import type { Knex } from 'knex';
import { newId } from '../db/ids.js';
import { isUniqueViolation } from '../db/unique.js';
import type { ConfigObject, ConfigTypeStore, StoredConfigObject } from '@certwright/sdk';

/** An object as stored: its fields with secret values sealed, its id and times. */
export type StoredObject = StoredConfigObject;

interface Row {
  tenant: string;
  type: string;
  name: string;
  id: string;
  body: string;
  created_at: number | string;
  updated_at: number | string;
}

const fromRow = (row: Row): StoredObject => ({
  id: row.id,
  name: row.name,
  body: JSON.parse(row.body) as ConfigObject,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

export class NameTakenError extends Error {}

/** The registry's table (`config_objects`): one row per object, the body as JSON. */
export class ConfigObjectStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async list(db: Knex | Knex.Transaction, tenant: string, type: string): Promise<StoredObject[]> {
    const rows = await db<Row>('config_objects').where({ tenant, type }).orderBy('name');
    return rows.map(fromRow);
  }

  async get(db: Knex | Knex.Transaction, tenant: string, type: string, name: string): Promise<StoredObject | null> {
    const row = await db<Row>('config_objects').where({ tenant, type, name }).first();
    return row ? fromRow(row) : null;
  }

  async insert(db: Knex | Knex.Transaction, tenant: string, type: string, name: string, body: ConfigObject): Promise<StoredObject> {
    const now = this.clock();
    const id = newId(now);
    try {
      await db('config_objects').insert({ tenant, type, name, id, body: JSON.stringify(body), created_at: now, updated_at: now });
    } catch (err) {
      if (isUniqueViolation(err)) throw new NameTakenError(name);
      throw err;
    }
    return { id, name, body, createdAt: now, updatedAt: now };
  }

  async update(db: Knex | Knex.Transaction, tenant: string, type: string, name: string, body: ConfigObject): Promise<boolean> {
    const changed = await db('config_objects').where({ tenant, type, name }).update({ body: JSON.stringify(body), updated_at: this.clock() });
    return changed > 0;
  }

  async remove(db: Knex | Knex.Transaction, tenant: string, type: string, name: string): Promise<boolean> {
    return (await db('config_objects').where({ tenant, type, name }).delete()) > 0;
  }

  get db(): Knex {
    return this.knex;
  }

  /** This table seen as one type's store (the registry treats every store alike). */
  forType(type: string): ConfigTypeStore {
    return {
      list: (tenant, db) => this.list(db as Knex, tenant, type),
      get: (tenant, name, db) => this.get(db as Knex, tenant, type, name),
      insert: async (tenant, name, body, db) => {
        try {
          return await this.insert(db as Knex, tenant, type, name, body);
        } catch (err) {
          if (err instanceof NameTakenError) return null;
          throw err;
        }
      },
      update: (tenant, name, body, db) => this.update(db as Knex, tenant, type, name, body),
      remove: (tenant, name, db) => this.remove(db as Knex, tenant, type, name),
    };
  }
}
