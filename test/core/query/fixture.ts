import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { openDatabase } from '../../../core/db/connection.js';
import { CORE_MIGRATIONS } from '../../../core/db/migrations/index.js';
import { CORE_MIGRATIONS_TABLE, migrateLatest } from '../../../core/db/migrator.js';
import { CERTIFICATE_LANGUAGE } from '../../../core/inventory/language.js';
import { applyQuery, parseQuery } from '../../../core/query/index.js';
import type { QueryLanguage, QueryNode } from '../../../core/query/index.js';
import { freshDatabaseUrl } from '../../helpers/database.js';

/**
 * A migrated database for the query-engine tests — SQLite in a temp dir, or a fresh MariaDB database
 * when TEST_DATABASE_URL is set — with a tiny row factory writing inv_certificates and its side tables
 * directly (no inventory service: these tests are about the SQL the compiler writes).
 */
export const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
export const DAY = 86_400_000;
export const TENANT = 'tenant-a';

export interface Row {
  /** Short name; the id is derived from it. */
  name: string;
  tenant?: string;
  dn?: string;
  issuer?: string;
  serial?: string;
  profile?: string | null;
  module?: string | null;
  owner?: string | null;
  team?: string | null;
  contactEmail?: string | null;
  holderId?: string | null;
  grade?: string | null;
  keyType?: string;
  /** Days from NOW. */
  notBefore?: number;
  notAfter?: number;
  revoked?: boolean;
  revocationDate?: number | null;
  revocationReason?: string | null;
  selfSigned?: boolean;
  discovered?: boolean;
  discoveredTrusted?: boolean | null;
  sans?: string[];
  labels?: Record<string, string>;
  metadata?: Record<string, string>;
  facets?: [string, string][];
}

export const idOf = (name: string): string => createHash('sha1').update(name).digest('hex').slice(0, 24);
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const reversed = (text: string): string => Array.from(text).reverse().join('');

export interface QueryDb {
  knex: Knex;
  engine: 'sqlite' | 'mysql';
  insert(rows: Row[]): Promise<void>;
  /** Names of the rows of TENANT a query selects, sorted. */
  names(query: string | QueryNode, options?: { language?: QueryLanguage; now?: number }): Promise<string[]>;
}

export async function queryDb(t: { teardown(fn: () => unknown): void }): Promise<QueryDb> {
  const url = await freshDatabaseUrl(t);
  const dir = mkdtempSync(join(tmpdir(), 'cw-query-'));
  const db = openDatabase({ url, dataDir: dir, pool: { min: 0, max: 2 } });
  t.teardown(async () => {
    await db.knex.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateLatest(db.knex, CORE_MIGRATIONS, CORE_MIGRATIONS_TABLE);
  const knex = db.knex;
  const byId = new Map<string, string>();

  async function insert(rows: Row[]): Promise<void> {
    for (const r of rows) {
      const id = idOf(r.name);
      byId.set(id, r.name);
      const tenant = r.tenant ?? TENANT;
      const dn = r.dn ?? `CN=${r.name}`;
      const issuer = r.issuer ?? 'CN=Test CA';
      await knex('inv_certificates').insert({
        id,
        tenant,
        module: r.module === undefined ? 'webra' : r.module,
        profile: r.profile === undefined ? null : r.profile,
        owner: r.owner === undefined ? null : r.owner,
        team: r.team === undefined ? null : r.team,
        contact_email: r.contactEmail ?? null,
        thumbprint: createHash('sha1').update(`t${r.name}`).digest('hex'),
        public_key_thumbprint: sha256(`k${r.name}`),
        self_signed: r.selfSigned ?? false,
        dn,
        dn_key: sha256(dn),
        serial: r.serial ?? createHash('md5').update(r.name).digest('hex'),
        issuer,
        issuer_key: sha256(issuer),
        not_before: NOW + (r.notBefore ?? -10) * DAY,
        not_after: NOW + (r.notAfter ?? 100) * DAY,
        revoked: r.revoked ?? false,
        revocation_date: r.revocationDate ?? null,
        revocation_reason: r.revocationReason ?? null,
        key_type: r.keyType ?? 'ec-secp256r1',
        signing_algorithm: 'ecdsa-with-SHA256',
        holder_id: r.holderId ?? null,
        discovered: r.discovered ?? false,
        discovered_trusted: r.discoveredTrusted === undefined ? null : r.discoveredTrusted,
        grade: r.grade ?? null,
        created_at: NOW,
        updated_at: NOW,
      });
      const side = { certificate_id: id, tenant };
      await knex('inv_certificate_documents').insert({ ...side, pem: '-----BEGIN CERTIFICATE-----' });
      for (const [position, value] of (r.sans ?? []).entries()) {
        const lc = value.toLowerCase();
        await knex('inv_certificate_sans').insert({ ...side, san_type: 'DNSNAME', value, value_lc: lc, value_rev: reversed(lc), position });
      }
      for (const [key, value] of Object.entries(r.labels ?? {})) await knex('inv_certificate_labels').insert({ ...side, key, value });
      for (const [key, value] of Object.entries(r.metadata ?? {})) await knex('inv_certificate_metadata').insert({ ...side, key, value });
      for (const [facet, value] of r.facets ?? []) await knex('inv_certificate_facets').insert({ ...side, facet, value });
    }
  }

  async function names(query: string | QueryNode, options: { language?: QueryLanguage; now?: number } = {}): Promise<string[]> {
    const language = options.language ?? CERTIFICATE_LANGUAGE;
    const ast = typeof query === 'string' ? parseQuery(query, language) : query;
    const T = language.table;
    const qb = knex(T).select(`${T}.id`).where(`${T}.tenant`, TENANT);
    applyQuery(qb, ast, language, { knex, now: options.now ?? NOW, table: T });
    const rows = (await qb) as { id: string }[];
    return rows.map((r) => byId.get(r.id) ?? `?${r.id}`).sort();
  }

  return { knex, engine: db.engine, insert, names };
}
