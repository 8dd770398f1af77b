import type { CertificateObject } from '../types.js';
import { PROPERTY_BUILDERS, type CertificateRow } from '../view.js';
import { isoDate } from './iso-date.js';

/** Columns of a CSV export when the body names no `fields`: what a spreadsheet user asks first. */
export const DEFAULT_CSV_FIELDS = [
  '_id',
  'dn',
  'subjectAlternateNames',
  'serial',
  'issuer',
  'notBefore',
  'notAfter',
  'status',
  'revocationDate',
  'revocationReason',
  'profile',
  'module',
  'owner',
  'team',
  'contactEmail',
  'keyType',
  'signingAlgorithm',
  'thumbprint',
  'labels',
  'metadata',
] as const;

const DATES = new Set(['notBefore', 'notAfter', 'revocationDate']);

/**
 * A cell per RFC 4180 (quoted when it holds a comma, quote, CR or LF), with spreadsheet formula
 * injection defused: a text cell starting with `=`, `+`, `-`, `@`, TAB or CR gets a leading `'`
 * (OWASP CSV injection), since certificate fields (DNs, labels, SANs) are attacker-influenced.
 */
export function csvCell(value: string): string {
  let text = value;
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One property of a certificate as CSV text: dates ISO 8601 (UTC), lists joined with `; `. */
export function csvValue(property: string, object: CertificateObject): string {
  const value = (object as unknown as Record<string, unknown>)[property];
  if (value === undefined || value === null) return '';
  if (DATES.has(property) && typeof value === 'number') return isoDate(value);
  if (property === 'subjectAlternateNames') return (value as { sanType: string; value: string }[]).map((s) => `${s.sanType}:${s.value}`).join('; ');
  if (property === 'labels' || property === 'metadata') return (value as { key: string; value: string }[]).map((kv) => `${kv.key}=${kv.value}`).join('; ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

const isKeyValues = (value: unknown): value is { key: string; value: string }[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'object' && v !== null && 'key' in v);

/**
 * One CSV cell of a plain object's property (events, requests): dates ISO 8601 (UTC), labels / metadata as
 * `key=value; …`, other objects as JSON, text guarded against formula injection.
 */
export function csvObjectCell(value: unknown, date: boolean): string {
  if (value === undefined || value === null) return '';
  if (date && typeof value === 'number') return isoDate(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isKeyValues(value)) return csvCell(value.map((p) => `${p.key}=${p.value}`).join('; '));
  return csvCell(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** Dates and numbers the service wrote are not formulas: only free text needs the injection guard. */
export function csvRow(properties: readonly string[], object: CertificateObject): string {
  return `${properties
    .map((p) => {
      const text = csvValue(p, object);
      return DATES.has(p) ? text : csvCell(text);
    })
    .join(',')}\r\n`;
}

/** The SANs, labels and metadata of rows as their CSV text (`DNSNAME:a; DNSNAME:b`, `env=prod`), by id. */
export interface SideTexts {
  subjectAlternateNames?: ReadonlyMap<string, string>;
  labels?: ReadonlyMap<string, string>;
  metadata?: ReadonlyMap<string, string>;
}
const SIDE_TEXT = new Set(['subjectAlternateNames', 'labels', 'metadata']);
/** Written by the service as hex or from a closed set: csvCell would return them unchanged. */
const PLAIN = new Set(['_id', 'serial', 'thumbprint', 'publicKeyThumbprint', 'status', 'revoked', 'selfSigned', 'escrowed', 'autoRenew', 'crlSynchronized']);
const NO_SIDES = {};

/**
 * Characters per chunk csvLines hands out. V8 allocates a string over ~128 KB (a flattened chunk)
 * straight in the old generation, where it lives until the next full collection: 1,000-line chunks
 * (~450 KB) made a 1,000,000-row export peak near 350 MB of RSS, chunks under this bound near 220 MB.
 */
export const CSV_CHUNK_CHARS = 64 * 1024;

/**
 * A keyset-paged CSV export (certificates, requests, events): the header line, then each batch's lines handed
 * out in chunks of about CSV_CHUNK_CHARS. The next keyset read starts while this batch is formatted (on another
 * pooled connection): the database and the formatting overlap, at most one batch ahead, so memory stays bounded
 * by two batches whatever the export's size. `linesOf` may answer lines or ready chunks.
 */
export async function* keysetCsv<R>(
  header: readonly string[],
  first: R[],
  batchSize: number,
  nextBatch: (last: R) => Promise<R[]>,
  linesOf: (rows: R[]) => Iterable<string> | Promise<Iterable<string>>,
): AsyncGenerator<string> {
  yield csvLine(header);
  let rows = first;
  while (rows.length > 0) {
    const next = rows.length < batchSize ? null : nextBatch(rows[rows.length - 1]!);
    // A failure of the read ahead surfaces when it is awaited, not as an unhandled rejection meanwhile.
    next?.catch(() => undefined);
    let out = '';
    for (const line of await linesOf(rows)) {
      out += line;
      if (out.length >= CSV_CHUNK_CHARS) {
        yield out;
        out = '';
      }
    }
    if (out !== '') yield out;
    if (!next) return;
    rows = await next;
  }
}

/**
 * csvRow for many rows without building their certificate objects: each cell from the row's column
 * through the property's builder (as objectOf would) and the side texts, formatted as csvValue does.
 * The export's hot path: at 1,000,000 rows the objects and their lists were most of its garbage.
 * Returns the lines in chunks of about CSV_CHUNK_CHARS.
 */
export function csvLines(properties: readonly string[], rows: readonly CertificateRow[], sides: SideTexts, now: number): string[] {
  const cells = properties.map((property): ((row: CertificateRow) => string) => {
    if (SIDE_TEXT.has(property)) {
      const texts = sides[property as keyof SideTexts];
      return (row) => csvCell(texts?.get(row.id) ?? '');
    }
    const build = PROPERTY_BUILDERS.get(property);
    if (!build) return () => '';
    const date = DATES.has(property);
    if (PLAIN.has(property)) {
      return (row) => {
        const value = build(row, NO_SIDES, now);
        return value === undefined || value === null ? '' : String(value);
      };
    }
    return (row) => {
      const value = build(row, NO_SIDES, now);
      if (value === undefined || value === null) return '';
      if (date && typeof value === 'number') return isoDate(value);
      return csvCell(typeof value === 'object' ? JSON.stringify(value) : String(value));
    };
  });
  const chunks: string[] = [];
  let out = '';
  for (const row of rows) {
    let line = '';
    for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : ',') + cells[i]!(row);
    out += `${line}\r\n`;
    if (out.length >= CSV_CHUNK_CHARS) {
      chunks.push(out);
      out = '';
    }
  }
  if (out !== '') chunks.push(out);
  return chunks;
}
