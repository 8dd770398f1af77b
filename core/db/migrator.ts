import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

/** A migration is code: a name and an `up` (and optional `down`) taking knex. */
export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down?(knex: Knex): Promise<void>;
}

/** Feeds knex's migrator from an in-memory list, so migrations need no file-system conventions. */
class ListSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly list: readonly Migration[]) {}
  getMigrations(): Promise<Migration[]> {
    return Promise.resolve([...this.list]);
  }
  getMigrationName(m: Migration): string {
    return m.name;
  }
  getMigration(m: Migration): Promise<Knex.Migration> {
    return Promise.resolve({ up: (k: Knex) => m.up(k), down: (k: Knex) => (m.down ? m.down(k) : Promise.resolve()) });
  }
}

export const CORE_MIGRATIONS_TABLE = 'cw_migrations';

/** Each plugin keeps its own history table, so plugins never see each other's migrations. */
export function pluginMigrationsTable(pluginId: string): string {
  const slug = pluginId.replace(/[^a-z0-9]+/gi, '_').toLowerCase().slice(0, 32);
  const hash = createHash('sha256').update(pluginId).digest('hex').slice(0, 8);
  return `cw_migrations_p_${slug}_${hash}`;
}

/** Applies pending migrations; knex's lock table keeps two nodes booting at once from both running them. */
export async function migrateLatest(knex: Knex, migrations: readonly Migration[], tableName: string): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource: new ListSource(migrations), tableName })) as [number, string[]];
  return applied;
}

export async function pendingMigrations(knex: Knex, migrations: readonly Migration[], tableName: string): Promise<number> {
  const [, pending] = (await knex.migrate.list({ migrationSource: new ListSource(migrations), tableName })) as [unknown[], unknown[]];
  return pending.length;
}

/** Loads a plugin's migration folder: every .ts/.js module, in file-name order, named by file name. */
export async function loadMigrationFolder(folder: string): Promise<Migration[]> {
  const files = readdirSync(folder)
    .filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts'))
    .sort();
  const list: Migration[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(resolve(folder, file)).href)) as Partial<Migration> & { default?: Partial<Migration> };
    const up = mod.up ?? mod.default?.up;
    if (typeof up !== 'function') throw new Error(`migration ${file} exports no up(knex)`);
    list.push({ name: file.replace(/\.(ts|js|mjs)$/, ''), up, down: mod.down ?? mod.default?.down });
  }
  return list;
}
