/**
 * JSON Schemas written from ../shared/spec/client-compat.md, used by tests to validate every request and
 * certificate answer: §2.5 (request object, with the keys v2 Go requires in its oneOf decoding and its
 * strict status enum), §3 (certificate object, v2 required keys; arrays never null), §2.3 template answers.
 */
import { Ajv, type ValidateFunction } from 'ajv';

const keyValues = {
  type: 'array',
  items: { type: 'object', required: ['key', 'value'], properties: { key: { type: 'string' }, value: { type: 'string' } } },
} as const;
const epoch = { type: 'integer', minimum: 0 } as const;

/** §3 certificate object. */
export const certificateSchema = {
  $id: 'certificate',
  type: 'object',
  required: ['_id', 'certificate', 'dn', 'escrowed', 'issuer', 'keyType', 'metadata', 'module', 'notAfter', 'notBefore', 'publicKeyThumbprint', 'revoked', 'selfSigned', 'serial', 'signingAlgorithm', 'subjectAlternateNames', 'thumbprint'],
  properties: {
    _id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    module: { type: 'string' },
    profile: { type: 'string' },
    owner: { type: 'string' },
    team: { type: 'string' },
    contactEmail: { type: 'string' },
    certificate: { type: 'string', pattern: '^-----BEGIN CERTIFICATE-----' },
    thumbprint: { type: 'string', pattern: '^[0-9a-f]{40}$' },
    publicKeyThumbprint: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    selfSigned: { type: 'boolean' },
    dn: { type: 'string' },
    serial: { type: 'string', pattern: '^[0-9a-f]+$' },
    issuer: { type: 'string' },
    notBefore: epoch,
    notAfter: epoch,
    revoked: { type: 'boolean' },
    revocationDate: epoch,
    revocationReason: { type: 'string' },
    keyType: { type: 'string' },
    signingAlgorithm: { type: 'string' },
    subjectAlternateNames: { type: 'array', items: { type: 'object', required: ['sanType', 'value'], properties: { sanType: { type: 'string' }, value: { type: 'string' } } } },
    labels: keyValues,
    metadata: keyValues,
    holderId: { type: 'string' },
    escrowed: { type: 'boolean' },
    autoRenew: { type: 'boolean' },
    crlSynchronized: { type: 'boolean' },
  },
} as const;

/** §2.5 request object (template/submit/get/approve/deny/cancel answers). */
export const requestSchema = {
  $id: 'request',
  type: 'object',
  required: ['_id', 'module', 'workflow', 'status', 'profile', 'template', 'holderId', 'registrationDate', 'lastModificationDate', 'removeAt'],
  properties: {
    _id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    module: { type: 'string', enum: ['webra', 'scep', 'est', 'acme', 'crmp', 'acme-external', 'intune', 'jamf', 'intunepkcs'] },
    workflow: { type: 'string', enum: ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'] },
    status: { type: 'string', enum: ['pending', 'approved', 'denied', 'canceled', 'completed'] },
    profile: { type: ['string', 'null'] },
    template: { type: 'object' },
    dn: { type: 'string' },
    requester: { type: 'string' },
    approver: { type: 'string' },
    contact: { type: 'string' },
    team: { type: 'string' },
    requesterComment: { type: 'string' },
    approverComment: { type: 'string' },
    registrationDate: epoch,
    lastModificationDate: epoch,
    expirationDate: epoch,
    removeAt: { anyOf: [epoch, { type: 'null' }] },
    certificateId: { type: 'string', pattern: '^[0-9a-f]{24}$' },
    certificatePem: { type: 'string' },
    // Left out rather than null where clients index it (§10).
    certificate: { $ref: 'certificate' },
    pkcs12: { type: 'object', required: ['value'], properties: { value: { type: 'string', minLength: 1 } } },
    password: { type: 'object', required: ['value'], properties: { value: { type: 'string', minLength: 1 } } },
    labels: keyValues,
    metadata: keyValues,
    holderId: { type: ['string', 'null'] },
    globalHolderIdCount: { type: 'integer' },
    profileHolderIdCount: { type: 'integer' },
    triggerResults: { type: 'array' },
    error: { type: 'string' },
    externalId: { type: 'object' },
    retryAt: epoch,
    retryCount: { type: 'integer', minimum: 0 },
    dryRun: { type: 'boolean' },
    permissions: { type: 'object', properties: { approve: { type: 'boolean' }, cancel: { type: 'boolean' } }, additionalProperties: { type: 'boolean' } },
  },
} as const;

/** §2.3 / §10 template answer: echoes module and workflow, carries `capabilities.centralized/decentralized` for enroll. */
export const templateAnswerSchema = {
  $id: 'template-answer',
  type: 'object',
  required: ['module', 'workflow', 'profile', 'template'],
  not: { properties: { status: { const: 'pending' } }, required: ['status'] },
  properties: {
    module: { type: 'string' },
    workflow: { type: 'string' },
    profile: { type: 'string' },
    template: { type: 'object' },
  },
} as const;

export const enrollTemplateSchema = {
  $id: 'enroll-template',
  allOf: [{ $ref: 'template-answer' }],
  properties: {
    template: {
      type: 'object',
      required: ['capabilities', 'subject'],
      properties: {
        capabilities: { type: 'object', required: ['centralized', 'decentralized', 'defaultKeyType', 'authorizedKeyTypes'] },
        subject: { type: 'array', items: { type: 'object', required: ['element', 'editable'] } },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(certificateSchema);
ajv.addSchema(requestSchema);
ajv.addSchema(templateAnswerSchema);
ajv.addSchema(enrollTemplateSchema);

const compiled = (id: string): ValidateFunction => ajv.getSchema(id)!;

/** Validation errors of `value` against one of the schemas above, as text ('' = valid). */
export function compatErrors(schema: 'request' | 'certificate' | 'template-answer' | 'enroll-template', value: unknown): string {
  const validate = compiled(schema);
  return validate(value) ? '' : ajv.errorsText(validate.errors, { dataVar: schema });
}
