import type { Knex } from 'knex';
import { CERTIFICATE_LANGUAGE } from '../inventory/language.js';
import { querySource, type QueryNode } from '../query/index.js';
import type { SimCertificate } from './simulate.js';

const T = CERTIFICATE_LANGUAGE.table;
const PAGE = 5000;

interface Row {
  id: string;
  dn: string;
  module: string | null;
  auto_renew: number | boolean;
  not_before: number | string;
  not_after: number | string;
}

export interface InventorySelection {
  knex: Knex;
  tenant: string;
  /** HCQL tree (parseQuery with CERTIFICATE_LANGUAGE); `{kind: 'all'}` for every certificate. */
  query: QueryNode;
  /** The period's start: certificates whose notAfter is before it are not read. */
  start: number;
  /** For the query's relative dates and `status is …`. */
  now: number;
}

/**
 * The inventory certificates the simulator replays, narrowed by the query through the search's query engine
 * (core/query querySource, as triggers do): not revoked, still valid at the period's start, and not renewed
 * already (no `renewed_certificate_id` metadata, written by the request workflow on a renewal: the successor
 * is in the inventory and is replayed instead; counting both would count one certificate twice).
 */
function selection(s: InventorySelection, idOrdered: boolean): { qb: Knex.QueryBuilder; idRef: string } {
  const { qb, idRef } = querySource(s.query, CERTIFICATE_LANGUAGE, { knex: s.knex, now: s.now, table: T, tenant: s.tenant }, idOrdered);
  qb.where(`${T}.revoked`, false)
    .where(`${T}.not_after`, '>=', s.start)
    .whereNotExists((sub) =>
      sub.select(s.knex.raw('1')).from('inv_certificate_metadata as m').whereRaw('?? = ??', ['m.certificate_id', `${T}.id`]).andWhere('m.tenant', s.tenant).andWhere('m.key', 'renewed_certificate_id'),
    );
  return { qb, idRef };
}

/** How many certificates `readInventory` will hand over (for the progress bar). */
export async function countInventory(s: InventorySelection): Promise<number> {
  const row = (await selection(s, false).qb.count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The selected certificates, page by page in id order (keyset: constant cost per page, bounded memory). */
export async function* readInventory(s: InventorySelection): AsyncGenerator<SimCertificate[]> {
  let after: string | null = null;
  for (;;) {
    const { qb, idRef } = selection(s, true);
    if (after !== null) qb.where(idRef, '>', after);
    const rows = (await qb
      .select(`${T}.id as id`, `${T}.dn as dn`, `${T}.module as module`, `${T}.auto_renew as auto_renew`, `${T}.not_before as not_before`, `${T}.not_after as not_after`)
      .orderBy(idRef)
      .limit(PAGE)) as Row[];
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      dn: r.dn,
      module: r.module,
      autoRenew: r.auto_renew === true || Number(r.auto_renew) === 1,
      notBefore: Number(r.not_before),
      notAfter: Number(r.not_after),
    }));
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}
