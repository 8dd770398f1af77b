import type { Knex } from 'knex';
import { CERTIFICATE_LANGUAGE } from '../../../inventory/language.js';
import { CertificateRepository, columnsFor, DOCUMENT_COLUMNS_FOR, type CertificateRow } from '../../../inventory/repository.js';
import { csvLines, csvRow, DEFAULT_CSV_FIELDS, keysetCsv } from '../../../inventory/search/csv.js';
import { projectionOf } from '../../../inventory/search/projection.js';
import { applyAfter, applySort, idOrdered, sortKeysOf } from '../../../inventory/search/sort.js';
import { denseSideWalk, parseQuery, querySource } from '../../../query/index.js';
import type { ReportParameters } from './parameters.js';

const LANGUAGE = CERTIFICATE_LANGUAGE;
const T = LANGUAGE.table;
const BATCH = 1000;
/**
 * A mailed report is one message: past this many certificates it would outgrow what mail servers take
 * (about 400 bytes a row: 20 MB). The run fails, saying so, rather than sending a message that bounces.
 */
export const REPORT_MAX_ROWS = 50_000;

/**
 * The certificates an HCQL report matches, as the CSV export (POST /api/v1/certificates/csv) writes them:
 * same columns (hqlFields, else the export's defaults), cells and keyset batches. The export's route reads
 * its caller's permission filters from the request; a scheduled run has no caller, and the task was saved by
 * someone allowed to configure the scheduler, so the report sees the whole tenant.
 */
export async function reportCsv(knex: Knex, clock: () => number, tenant: string, p: Pick<ReportParameters, 'hqlQuery' | 'hqlFields' | 'hqlSortedBy'>): Promise<{ csv: string; rows: number }> {
  const repository = new CertificateRepository(knex, clock);
  const ast = parseQuery(p.hqlQuery, LANGUAGE);
  const properties = p.hqlFields && p.hqlFields.length > 0 ? [...projectionOf(p.hqlFields)!] : [...DEFAULT_CSV_FIELDS];
  const projection = new Set<string>(properties);
  const keys = sortKeysOf(LANGUAGE, p.hqlSortedBy ?? undefined);
  const now = clock();
  const byId = idOrdered(LANGUAGE, keys);
  const base = { knex, now, table: T, tenant };
  const source = querySource(ast, LANGUAGE, { ...base, walk: await denseSideWalk(ast, LANGUAGE, base, byId) }, byId);
  const id = { column: LANGUAGE.idColumn, ref: source.idRef };
  const contiguous = ast.kind === 'all' && byId;
  const direct = DOCUMENT_COLUMNS_FOR(projection).length === 0;
  const columns = [...new Set([...columnsFor(projection), ...keys.map((k) => k.column)])].map((c) => `${T}.${c}`);
  let rows = 0;
  const batch = async (cursor: CertificateRow | null): Promise<CertificateRow[]> => {
    const q = source.qb.clone().select(columns);
    if (cursor) applyAfter(q, T, keys, cursor as unknown as Record<string, unknown>, id);
    applySort(q, T, keys, id);
    const read = (await q.limit(BATCH)) as CertificateRow[];
    rows += read.length;
    if (rows > REPORT_MAX_ROWS) throw new Error(`the query matches more than ${REPORT_MAX_ROWS} certificates, more than one message can carry: narrow it`);
    return read;
  };
  const linesOf = async (batchRows: CertificateRow[]): Promise<Iterable<string>> => {
    if (direct) return csvLines(properties, batchRows, await repository.sideTextsOf(tenant, batchRows.map((r) => r.id), projection, knex, { contiguous }), clock());
    return (await repository.objectsOf(tenant, batchRows, projection, knex, { contiguous })).map((o) => csvRow(properties, o));
  };
  let csv = '';
  for await (const chunk of keysetCsv(properties, await batch(null), BATCH, batch, linesOf)) csv += chunk;
  return { csv, rows };
}
