import type { RevocationSource, RevocationStatus, RevokedEntry } from '@certwright/sdk';
import type { Knex } from 'knex';
import { dnKey } from '../../inventory/record.js';

/** RFC 5280 CRLReason names, by their lower-case spelling (and the spellings clients send). */
const REASONS: Record<string, string> = Object.fromEntries(
  ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise'].map((r) => [r.toLowerCase(), r]),
);
REASONS['affiliationchange'] = 'affiliationChanged';
REASONS['cacompromise'] = 'cACompromise';

/** The RFC 5280 name of a stored revocation reason (any case, `_` and `-` ignored); undefined when unknown. */
export function reasonName(stored: string | null | undefined): string | undefined {
  if (!stored) return undefined;
  return REASONS[stored.replace(/[_\s-]/g, '').toLowerCase()];
}

/** A serial as the inventory stores it: lower-case hex of the value's bytes, no leading zero byte. */
export function normalSerial(serial: string): string {
  let s = serial.trim().toLowerCase().replace(/^0x/, '').replace(/[:\s]/g, '');
  s = s.replace(/^0+/, '');
  if (s.length % 2 === 1) s = `0${s}`;
  return s === '' ? '00' : s;
}

interface Row {
  revoked: number | boolean;
  revocation_date: number | string | null;
  revocation_reason: string | null;
  updated_at: number | string;
  serial?: string;
}

/**
 * The inventory's view of what one issuing CA signed (inv_certificates by issuer DN and serial): the source
 * of a connector's CRL and OCSP answers. `issuerDn` is the subject of the connector's issuing CA, as the
 * inventory writes DNs.
 */
export function revocationSource(knex: Knex, tenant: string, issuerDn: string, clock: () => number): RevocationSource {
  const issuerKey = dnKey(issuerDn);
  const dateOf = (r: Row): number => Number(r.revocation_date ?? r.updated_at);
  return {
    async status(serial: string): Promise<RevocationStatus> {
      const rows = (await knex('inv_certificates')
        .where({ tenant, issuer_key: issuerKey, serial: normalSerial(serial) })
        .select('issuer', 'revoked', 'revocation_date', 'revocation_reason', 'updated_at')) as (Row & { issuer: string })[];
      const mine = rows.filter((r) => r.issuer === issuerDn);
      if (mine.length === 0) return { status: 'unknown' };
      const revoked = mine.find((r) => Boolean(r.revoked));
      if (!revoked) return { status: 'good' };
      const reason = reasonName(revoked.revocation_reason);
      return { status: 'revoked', revokedAt: dateOf(revoked), ...(reason ? { reason } : {}) };
    },
    async revoked(): Promise<RevokedEntry[]> {
      const rows = (await knex('inv_certificates')
        .where({ tenant, issuer_key: issuerKey, revoked: true })
        .andWhere('not_after', '>', clock())
        .orderBy('serial')
        .select('serial', 'issuer', 'revocation_date', 'revocation_reason', 'updated_at', 'revoked')) as (Row & { serial: string; issuer: string })[];
      const seen = new Set<string>();
      const out: RevokedEntry[] = [];
      for (const r of rows) {
        if (r.issuer !== issuerDn || seen.has(r.serial)) continue;
        seen.add(r.serial);
        const reason = reasonName(r.revocation_reason);
        out.push({ serial: r.serial, revokedAt: dateOf(r), ...(reason ? { reason } : {}) });
      }
      return out;
    },
  };
}
