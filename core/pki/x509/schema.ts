/**
 * JSON schemas of the decoded objects, for route responses (serialised by fast-json-stringify, and
 * listed in the OpenAPI document). Inline, without $id, so any route module can use them.
 */
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const strings = { type: 'array', items: str } as const;

export const sanSchema = {
  type: 'object',
  required: ['sanType', 'value'],
  properties: {
    sanType: { type: 'string', enum: ['DNSNAME', 'IPADDRESS', 'RFC822NAME', 'URI', 'OTHERNAME_UPN', 'OTHERNAME_GUID', 'OTHERNAME', 'REGISTERED_ID', 'DIRECTORYNAME'] },
    value: str,
  },
} as const;

export const dnElementSchema = {
  type: 'object',
  required: ['element', 'type', 'value'],
  properties: { element: { type: 'string', description: 'cn.1, ou.2, … (client-compat §2.3)' }, type: str, value: str },
} as const;

const usages = { type: 'object', required: ['critical', 'usages'], properties: { critical: bool, usages: strings } } as const;

export const extensionsSchema = {
  type: 'object',
  required: ['all'],
  properties: {
    keyUsage: usages,
    extendedKeyUsage: usages,
    basicConstraints: { type: 'object', required: ['critical', 'ca'], properties: { critical: bool, ca: bool, pathLength: { type: 'integer' } } },
    subjectKeyIdentifier: str,
    authorityKeyIdentifier: { type: 'object', properties: { keyIdentifier: str, issuer: strings, serial: str } },
    crlDistributionPoints: strings,
    authorityInfoAccess: { type: 'object', required: ['ocsp', 'caIssuers'], properties: { ocsp: strings, caIssuers: strings } },
    certificatePolicies: { type: 'array', items: { type: 'object', required: ['oid'], properties: { oid: str, cps: strings } } },
    nameConstraints: {
      type: 'object',
      required: ['critical', 'permitted', 'excluded'],
      properties: { critical: bool, permitted: { type: 'array', items: sanSchema }, excluded: { type: 'array', items: sanSchema } },
    },
    sctCount: { type: 'integer' },
    all: { type: 'array', items: { type: 'object', required: ['oid', 'critical'], properties: { oid: str, critical: bool, malformed: bool, hex: { type: 'string', description: 'extnValue octets, for extensions not interpreted' } } } },
  },
} as const;

