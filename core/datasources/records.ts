import { FetchFailure } from './errors.js';
import type { DatasourceRecord } from './model.js';

/**
 * What one fetch may keep: the records are stored whole as JSON (the cache computation rules read), so their
 * size is bounded beside their count, in UTF-8 bytes: well under MariaDB's default max_allowed_packet (16 MiB).
 */
export const MAX_RECORDS_BYTES = 4 * 1024 * 1024;
/** Bytes of an HTTP answer read before the fetch fails as oversized. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A value as JSON carries it: Dates as ISO text, binary as base64, big integers as text. */
export function jsonSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

/** The records of one fetch within its bounds, or a FetchFailure saying which bound. */
export function boundedRecords(records: unknown[], maxRecords: number, origin: string): DatasourceRecord[] {
  if (records.length > maxRecords) throw new FetchFailure(`${origin} answered more than ${maxRecords} records (maxRecords)`);
  const out: DatasourceRecord[] = [];
  for (const [i, record] of records.entries()) {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) throw new FetchFailure(`${origin}: record ${i} is not an object`);
    out.push(jsonSafe(record) as DatasourceRecord);
  }
  if (Buffer.byteLength(JSON.stringify(out)) > MAX_RECORDS_BYTES) throw new FetchFailure(`${origin}: the records exceed ${MAX_RECORDS_BYTES} bytes of JSON`);
  return out;
}

/** A record's field by name: exact, else the one whose name differs only in case (LDAP attribute names). */
export function fieldOf(record: DatasourceRecord, field: string): unknown {
  if (Object.hasOwn(record, field)) return record[field];
  const lower = field.toLowerCase();
  const found = Object.keys(record).find((k) => k.toLowerCase() === lower);
  return found === undefined ? undefined : record[found];
}
