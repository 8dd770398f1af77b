import type { LookupTable, LookupTables } from '../templatestring/evaluate.js';
import type { TemplateDatasources } from '../templatestring/routes.js';
import type { Datasource, DatasourceRecord } from './model.js';
import { fieldOf } from './records.js';
import type { DatasourceResults } from './results.js';

/** Datasources one rule may name: a rule reading more is refused before anything is loaded. */
export const MAX_LOOKUP_DATASOURCES = 8;
/** Indexed datasources kept in memory per node (cleared when full). */
const MAX_CACHED_TABLES = 64;

/**
 * What computation rules read through Lookup(): the records of each named datasource's last good fetch, indexed
 * by its key field (exact, then ignoring case: host names and LDAP values compare so), read from the cache table
 * only (a rule never reaches the outside world) and kept indexed in memory until a new fetch changes them.
 */
export function templateDatasources(deps: { permission: string; datasource: (tenant: string, name: string) => Promise<Datasource | null>; results: DatasourceResults }): TemplateDatasources {
  const cache = new Map<string, { version: number; keyField: string; table: LookupTable }>();
  return {
    permission: deps.permission,
    async load(tenant, names): Promise<LookupTables> {
      const reasons = new Map<string, string>();
      const tables = new Map<string, LookupTable>();
      const wanted = names.slice(0, MAX_LOOKUP_DATASOURCES);
      for (const name of names.slice(MAX_LOOKUP_DATASOURCES)) reasons.set(name, `a rule reads at most ${MAX_LOOKUP_DATASOURCES} datasources`);
      const definitions = new Map<string, Datasource>();
      for (const name of wanted) {
        const d = await deps.datasource(tenant, name);
        if (d) definitions.set(name, d);
        else reasons.set(name, `no datasource is named "${name}"`);
      }
      // The records (up to maxRecords, as JSON) are read and indexed once per fetch, not on every evaluation: the
      // version (when they were fetched) is a cheap read; only changed or unseen ones are loaded.
      const versions = await deps.results.versions(tenant, [...definitions.keys()]);
      const stale = [...definitions.keys()].filter((name) => {
        const hit = cache.get(`${tenant}\0${name}`);
        return versions.has(name) && !(hit && hit.version === versions.get(name) && hit.keyField === definitions.get(name)!.keyField);
      });
      const records = await deps.results.records(tenant, stale);
      if (cache.size + stale.length > MAX_CACHED_TABLES) cache.clear();
      for (const [name, d] of definitions) {
        const key = `${tenant}\0${name}`;
        const rows = records.get(name);
        if (rows) cache.set(key, { version: versions.get(name)!, keyField: d.keyField, table: indexed(rows, d.keyField) });
        const hit = versions.has(name) ? cache.get(key) : undefined;
        if (hit) tables.set(name, hit.table);
        else reasons.set(name, `the datasource "${name}" has no records yet (never fetched successfully: refresh it)`);
      }
      return { table: (name) => tables.get(name) ?? reasons.get(name) ?? `no datasource is named "${name}"` };
    },
  };
}

/** Records by the value(s) of their key field; the first record wins a duplicate key. */
export function indexed(records: DatasourceRecord[], keyField: string): LookupTable {
  const exact = new Map<string, DatasourceRecord>();
  const folded = new Map<string, DatasourceRecord>();
  for (const record of records) {
    const value = fieldOf(record, keyField);
    for (const key of Array.isArray(value) ? value : [value]) {
      if (typeof key !== 'string' && typeof key !== 'number') continue;
      const text = String(key);
      if (!exact.has(text)) exact.set(text, record);
      if (!folded.has(text.toLowerCase())) folded.set(text.toLowerCase(), record);
    }
  }
  return { find: (key) => exact.get(key) ?? folded.get(key.toLowerCase()) };
}
