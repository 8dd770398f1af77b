import { dnElementSchema, sanSchema } from '../pki/x509/schema.js';

const nullableString = { type: ['string', 'null'] } as const;
const localizedText = { type: 'array', items: { type: 'object', required: ['lang', 'value'], properties: { lang: { type: 'string' }, value: { type: 'string' } } } } as const;

/** GET /api/v1/ui/: what the login page needs before anyone authenticates. */
export const uiSettingsSchema = {
  type: 'object',
  required: ['version', 'interfaceCustomization', 'termsOfServices'],
  properties: {
    version: { type: 'string', description: 'The Certwright version this server runs' },
    interfaceCustomization: {
      type: 'object',
      description: 'The system configuration entry interface_customization (null / [] when unset)',
      required: ['logo', 'headerStart', 'headerEnd', 'announcements'],
      properties: {
        logo: { ...nullableString, description: 'The logo as an image data URL or base64, as configured' },
        headerStart: { ...nullableString, description: 'Header gradient start colour (#rrggbb)' },
        headerEnd: { ...nullableString, description: 'Header gradient end colour (#rrggbb)' },
        announcements: {
          type: 'array',
          items: { type: 'object', required: ['level', 'content'], properties: { level: { type: 'string', enum: ['info', 'warning', 'danger'] }, content: localizedText } },
        },
      },
    },
    termsOfServices: { type: 'array', items: { type: 'string' }, description: 'Names of the terms of service (/api/v1/system/terms-of-services/)' },
  },
} as const;

/** POST /api/v1/ui/cr/format: the certificate request as pasted in a form. */
export const formatBodySchema = {
  type: 'object',
  required: ['csr'],
  properties: {
    csr: { type: 'string', description: 'A PKCS#10 request: PEM (CRLF, indented, or missing an armor line) or bare base64 of its DER' },
  },
} as const;

/** The request normalized, with what a form shows of it. */
export const formatAnswerSchema = {
  type: 'object',
  required: ['pem', 'subject', 'dnElements', 'keyType', 'sans', 'signatureValid'],
  properties: {
    pem: { type: 'string', description: 'The request as PEM: its DER re-armored, 64 characters a line, LF line ends' },
    subject: { type: 'string', description: 'The subject DN (RFC 4514 order, as the decoders answer it)' },
    dnElements: { type: 'array', items: dnElementSchema },
    keyType: { type: 'string', description: 'RSA, EC, Ed25519, Ed448, DSA, ML-DSA-44|65|87, or the key algorithm OID' },
    keySize: { type: 'integer', description: 'Bits: the RSA/DSA modulus, the EC field; absent for EdDSA and ML-DSA' },
    curve: { type: 'string', description: 'EC keys: the named curve (secp256r1…)' },
    sans: { type: 'array', items: sanSchema, description: 'Subject alternative names the request asks for' },
    signatureValid: { type: 'boolean', description: 'The request is signed by the key it carries (proof of possession)' },
  },
} as const;
