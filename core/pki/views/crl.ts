import type { DecodedCrl } from '../crl/decode.js';
import { decodedCrlSchema } from '../crl/schema.js';

/**
 * A decoded CRL as Horizon's clients read it (the MCP server's decode_crl: issuerDn, thisUpdate,
 * nextUpdate, number, version) and Certwright's entries, extensions and thumbprints. `number` is the
 * CRL number as a JSON integer when it fits one exactly; `crlNumber` keeps every digit (20 octets).
 */
export type CrlView = Omit<DecodedCrl, 'issuer'> & { issuerDn: string; number?: number };

export function crlView(crl: DecodedCrl): CrlView {
  const { issuer, ...rest } = crl;
  const view: CrlView = { issuerDn: issuer, ...rest };
  if (crl.crlNumber !== null && BigInt(crl.crlNumber) <= BigInt(Number.MAX_SAFE_INTEGER)) view.number = Number(crl.crlNumber);
  return view;
}

const { issuer: _issuer, ...crlProperties } = decodedCrlSchema.properties;
export const crlViewSchema = {
  type: 'object',
  required: decodedCrlSchema.required.map((k) => (k === 'issuer' ? 'issuerDn' : k)),
  properties: {
    issuerDn: { type: 'string', description: 'RFC 4514' },
    number: { type: 'integer', description: 'the CRL number, when it fits a JSON integer exactly (else see crlNumber)' },
    ...crlProperties,
  },
} as const;
