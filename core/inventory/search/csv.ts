import type { CertificateObject } from '../types.js';

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
  if (DATES.has(property) && typeof value === 'number') return new Date(value).toISOString();
  if (property === 'subjectAlternateNames') return (value as { sanType: string; value: string }[]).map((s) => `${s.sanType}:${s.value}`).join('; ');
  if (property === 'labels' || property === 'metadata') return (value as { key: string; value: string }[]).map((kv) => `${kv.key}=${kv.value}`).join('; ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
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
