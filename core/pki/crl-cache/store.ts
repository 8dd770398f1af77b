import type { Knex } from 'knex';
import { nameKey } from '../cas/store.js';

/** The cache row of one CA: the last CRL accepted (if any) and the last attempt. */
export interface CrlCacheRecord {
  caId: string;
  tenant: string;
  crl: Uint8Array | null;
  crlSha256: string | null;
  thisUpdate: number | null;
  nextUpdate: number | null;
  crlNumber: string | null;
  entries: number | null;
  fetchedAt: number | null;
  sourceUrl: string | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  nextRefreshAt: number | null;
}

export interface CrlEntry {
  serial: string;
  revocationDate: number;
  reason: string | null;
}

interface Row {
  ca_id: string;
  tenant: string;
  crl: Buffer | null;
  crl_sha256: string | null;
  this_update: number | string | null;
  next_update: number | string | null;
  crl_number: string | null;
  entries: number | null;
  fetched_at: number | string | null;
  source_url: string | null;
  last_attempt_at: number | string | null;
  last_error: string | null;
  next_refresh_at: number | string | null;
}

const ms = (v: number | string | null): number | null => (v === null ? null : Number(v));

const fromRow = (r: Row): CrlCacheRecord => ({
  caId: r.ca_id,
  tenant: r.tenant,
  crl: r.crl ? new Uint8Array(r.crl) : null,
  crlSha256: r.crl_sha256,
  thisUpdate: ms(r.this_update),
  nextUpdate: ms(r.next_update),
  crlNumber: r.crl_number,
  entries: r.entries === null ? null : Number(r.entries),
  fetchedAt: ms(r.fetched_at),
  sourceUrl: r.source_url,
  lastAttemptAt: ms(r.last_attempt_at),
  lastError: r.last_error,
  nextRefreshAt: ms(r.next_refresh_at),
});

/** A CA a revocation question names: its CRL dates (null: none cached) and the serial's entry, if listed. */
export interface RevocationRow {
  caId: string;
  thisUpdate: number | null;
  nextUpdate: number | null;
  entry: CrlEntry | null;
}

/** Columns without the CRL bytes: lists never need megabytes of DER. */
const SUMMARY = ['ca_id', 'tenant', 'crl_sha256', 'this_update', 'next_update', 'crl_number', 'entries', 'fetched_at', 'source_url', 'last_attempt_at', 'last_error', 'next_refresh_at'];

/** Inserts per statement: SQLite binds at most 32766 variables, MySQL's packet has a limit too. */
const CHUNK = 500;

/** pki_crl_cache and pki_crl_entries. */
export class CrlCacheStore {
  constructor(private readonly knex: Knex) {}

  async list(tenant: string): Promise<CrlCacheRecord[]> {
    const rows = (await this.knex('pki_crl_cache').where({ tenant }).select(SUMMARY)) as Row[];
    return rows.map((r) => fromRow({ ...r, crl: null }));
  }

  async get(tenant: string, caId: string, withCrl = false): Promise<CrlCacheRecord | undefined> {
    const q = this.knex('pki_crl_cache').where({ tenant, ca_id: caId });
    const row = (await (withCrl ? q.first() : q.first(...SUMMARY))) as Row | undefined;
    return row ? fromRow({ ...row, crl: row.crl ?? null }) : undefined;
  }

  /** Records an attempt that did not replace the CRL (unreachable, refused): the previous one stays. */
  async recordFailure(tenant: string, caId: string, at: number, error: string, sourceUrl: string | null, nextRefreshAt: number | null): Promise<void> {
    const fields = { last_attempt_at: at, last_error: error.slice(0, 4000), next_refresh_at: nextRefreshAt, ...(sourceUrl ? { source_url: sourceUrl } : {}) };
    await this.knex('pki_crl_cache')
      .insert({ ca_id: caId, tenant, ...fields })
      .onConflict('ca_id')
      .merge(fields);
  }

  /** Notes when the next fetch is planned (the job's own row is not readable by id from the API). */
  async planned(caId: string, nextRefreshAt: number | null): Promise<void> {
    await this.knex('pki_crl_cache').where({ ca_id: caId }).update({ next_refresh_at: nextRefreshAt });
  }

  /**
   * Stores an accepted CRL and, when its content changed, replaces the CA's revoked serials, in one
   * transaction: a reader sees the old list or the new one, never half of it.
   */
  async store(
    tenant: string,
    caId: string,
    crl: { der: Uint8Array; sha256: string; thisUpdate: number; nextUpdate: number | null; crlNumber: string | null; entries: CrlEntry[] },
    at: number,
    sourceUrl: string,
    nextRefreshAt: number,
  ): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const current = (await trx('pki_crl_cache').where({ ca_id: caId }).first('crl_sha256')) as { crl_sha256: string | null } | undefined;
      if (current?.crl_sha256 !== crl.sha256) {
        await trx('pki_crl_entries').where({ ca_id: caId }).delete();
        // A CRL may list a serial twice; the primary key keeps one.
        const unique = [...new Map(crl.entries.map((e) => [e.serial, e])).values()];
        for (let i = 0; i < unique.length; i += CHUNK) {
          await trx('pki_crl_entries').insert(
            unique.slice(i, i + CHUNK).map((e) => ({ ca_id: caId, serial: e.serial, revocation_date: e.revocationDate, reason: e.reason })),
          );
        }
      }
      const fields = {
        crl: Buffer.from(crl.der.buffer, crl.der.byteOffset, crl.der.length),
        crl_sha256: crl.sha256,
        this_update: crl.thisUpdate,
        next_update: crl.nextUpdate,
        crl_number: crl.crlNumber,
        entries: crl.entries.length,
        fetched_at: at,
        source_url: sourceUrl,
        last_attempt_at: at,
        last_error: null,
        next_refresh_at: nextRefreshAt,
      };
      await trx('pki_crl_cache')
        .insert({ ca_id: caId, tenant, ...fields })
        .onConflict('ca_id')
        .merge(fields);
    });
  }

  async removeCa(caId: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('pki_crl_entries').where({ ca_id: caId }).delete();
      await trx('pki_crl_cache').where({ ca_id: caId }).delete();
    });
  }

  /** One primary-key read: the entry of `serial` on the CRL of this CA, if any. */
  async entry(caId: string, serial: string): Promise<CrlEntry | undefined> {
    const row = (await this.knex('pki_crl_entries').where({ ca_id: caId, serial }).first('serial', 'revocation_date', 'reason')) as
      | { serial: string; revocation_date: number | string; reason: string | null }
      | undefined;
    return row ? { serial: row.serial, revocationDate: Number(row.revocation_date), reason: row.reason } : undefined;
  }

  /**
   * The CA(s) a revocation question names — by CA name, or by issuer DN (and SKI when the caller has the
   * certificate's AKI) — with their CRL dates and the entry of `serial` if listed: one indexed join
   * (unique name or subject index → cache primary key → entries primary key).
   */
  async lookup(tenant: string, by: { name: string } | { issuerDn: string; ski?: string }, serial: string): Promise<RevocationRow[]> {
    const q = this.knex('pki_cas as c')
      .leftJoin('pki_crl_cache as k', 'k.ca_id', 'c.id')
      .leftJoin('pki_crl_entries as e', (j) => j.on('e.ca_id', '=', 'c.id').andOnVal('e.serial', '=', serial))
      .where('c.tenant', tenant)
      .select('c.id as ca_id', 'k.this_update', 'k.next_update', 'e.serial', 'e.revocation_date', 'e.reason');
    if ('name' in by) q.where('c.name', by.name);
    else {
      q.where('c.subject_key', nameKey(by.issuerDn));
      if (by.ski) q.where('c.ski', by.ski);
    }
    const rows = (await q) as { ca_id: string; this_update: number | string | null; next_update: number | string | null; serial: string | null; revocation_date: number | string | null; reason: string | null }[];
    return rows.map((r) => ({
      caId: r.ca_id,
      thisUpdate: ms(r.this_update),
      nextUpdate: ms(r.next_update),
      entry: r.serial === null ? null : { serial: r.serial, revocationDate: Number(r.revocation_date), reason: r.reason },
    }));
  }
}
