import { dnElementSchema } from '../x509/schema.js';

/**
 * JSON schema of a DecodedCrl, for route responses (fast-json-stringify; OpenAPI). Inline, without
 * $id, like x509/schema.ts, so any route module can use it.
 */
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const strings = { type: 'array', items: str } as const;
const epochMs = { type: 'integer', description: 'epoch ms' } as const;

export const crlEntrySchema = {
  type: 'object',
  required: ['serial', 'revocationDate'],
  properties: {
    serial: { type: 'string', description: 'lower-case hex' },
    revocationDate: epochMs,
    reason: {
      type: 'string',
      description: 'UNSPECIFIED, KEYCOMPROMISE, CACOMPROMISE, AFFILIATIONCHANGED, SUPERSEDED, CESSATIONOFOPERATION, CERTIFICATEHOLD, REMOVEFROMCRL, PRIVILEGEWITHDRAWN, AACOMPROMISE; absent without a reason code',
    },
    invalidityDate: epochMs,
    certificateIssuer: strings,
  },
} as const;

export const decodedCrlSchema = {
  type: 'object',
  required: ['version', 'issuer', 'issuerElements', 'issuerHash', 'thisUpdate', 'nextUpdate', 'crlNumber', 'signingAlgorithm', 'extensions', 'entries', 'thumbprints'],
  properties: {
    version: { type: 'integer' },
    issuer: { type: 'string', description: 'RFC 4514' },
    issuerElements: { type: 'array', items: dnElementSchema },
    issuerHash: { type: 'string', description: 'OpenSSL name hash (openssl crl -hash)' },
    thisUpdate: epochMs,
    nextUpdate: { type: ['integer', 'null'], description: 'epoch ms' },
    crlNumber: { type: ['string', 'null'], description: 'decimal' },
    deltaCrlIndicator: { type: 'string', description: 'decimal; delta CRLs only' },
    signingAlgorithm: str,
    authorityKeyIdentifier: { type: 'object', properties: { keyIdentifier: str, issuer: strings, serial: str } },
    issuingDistributionPoint: {
      type: 'object',
      properties: {
        fullName: strings,
        nameRelativeToCrlIssuer: str,
        onlyContainsUserCerts: bool,
        onlyContainsCACerts: bool,
        onlySomeReasons: strings,
        indirectCrl: bool,
        onlyContainsAttributeCerts: bool,
      },
    },
    extensions: { type: 'array', items: { type: 'object', required: ['oid', 'critical'], properties: { oid: str, critical: bool } } },
    entries: { type: 'array', items: crlEntrySchema },
    thumbprints: { type: 'object', required: ['sha1', 'sha256'], properties: { sha1: str, sha256: str } },
  },
} as const;
