import type { CrlEntry, DecodedCrl } from './decode.js';

/**
 * Serials as the index keys them: lower-case hex without separators or leading zero bytes, the form
 * CertificateInfo.serial and CrlEntry.serial already have. Accepts `0A:1B`, `0x0a1b`, `00a1b`.
 */
export function normaliseSerial(serial: string): string {
  let s = serial.toLowerCase().replace(/^0x/, '').replace(/[^0-9a-f]/g, '');
  s = s.replace(/^0+/, '');
  if (s.length % 2) s = `0${s}`;
  return s === '' ? '00' : s;
}

/**
 * Revoked entries of one CRL by serial, for the CRL cache's "is this serial revoked" checks: one Map
 * lookup per check instead of a scan of (up to) 100k entries.
 */
export class CrlEntryIndex {
  private readonly bySerial = new Map<string, CrlEntry>();

  constructor(entries: readonly CrlEntry[]) {
    // A serial listed twice (it happens, e.g. hold then key compromise) answers with its last entry.
    for (const entry of entries) this.bySerial.set(entry.serial, entry);
  }

  static of(crl: Pick<DecodedCrl, 'entries'>): CrlEntryIndex {
    return new CrlEntryIndex(crl.entries);
  }

  get size(): number {
    return this.bySerial.size;
  }

  /** The entry of a serial (any common spelling), or undefined when it is not on the CRL. */
  get(serial: string): CrlEntry | undefined {
    return this.bySerial.get(serial) ?? this.bySerial.get(normaliseSerial(serial));
  }

  has(serial: string): boolean {
    return this.get(serial) !== undefined;
  }
}
