/**
 * JSON schemas of certificate profiles, written from CertificateProfile (core/profiles/types.ts). The input
 * schema refuses unknown fields at every level (admin configuration: the client-compat tolerance does not
 * apply); `_id`, `version`, `createdAt`, `updatedAt` echoed back from a GET are accepted and ignored. Both
 * carry the vendor's (Horizon's) form of the profile beside Certwright's (horizon/schema.ts, horizon/index.ts).
 * Deeper rules (element names, regexes, key types, the connector) are checked by validate.ts.
 */
import { localizedInput, localizedOutput } from '../http/localized-text.js';
import { KEY_USAGES } from '../pki/x509/extensions.js';
import { horizonSchemas } from './horizon/schema.js';
import { DEFAULT_SAN_MAX, KEY_TYPES, SAN_TYPES, WORKFLOWS } from './model.js';

/** Profile names are path segments and permission segments (lifecycle:<module>:<profile>:…). */
export const profileNameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[A-Za-z0-9._@-]+$' } as const;
const moduleSchema = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9-]*$', description: 'webra (default), scep, est, acme, …' } as const;
const text = (max: number) => ({ type: ['string', 'null'], maxLength: max }) as const;
const keyType = { type: 'string', enum: [...KEY_TYPES] } as const;
const principalList = {
  type: 'array',
  maxItems: 500,
  items: { type: 'string', minLength: 1, maxLength: 255 },
  description: 'Principal identifiers, `role:<name>`, `team:<name>`, or `*` (any authenticated principal)',
} as const;

function schemas(input: boolean) {
  const closed = input ? { additionalProperties: false } : {};
  const required = (names: string[]) => (input ? {} : { required: names });
  const computationRule = { ...text(4096), description: 'A computation rule computing the value from the request (csr.*, template.*, requester.*; Lookup for datasources): see POST /api/v1/templatestring/playground' };
  const subjectRule = {
    type: 'object',
    ...closed,
    required: ['element'],
    properties: {
      element: { type: 'string', minLength: 1, maxLength: 64, description: 'Attribute + 1-based index: cn.1, ou.2, o, c, st, l, e, dc, uid, serialNumber, givenName, surname, street, t, …' },
      value: text(1024),
      mandatory: { type: 'boolean', description: 'default false' },
      editable: { type: 'boolean', description: 'default true' },
      regex: { ...text(1024), description: 'ECMAScript regex the whole value must match' },
      computationRule,
    },
  };
  const sanRule = {
    type: 'object',
    ...closed,
    required: ['type'],
    properties: {
      type: { type: 'string', enum: [...SAN_TYPES] },
      value: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 1024 } },
      editable: { type: 'boolean', description: 'default true' },
      min: { type: 'integer', minimum: 0, maximum: 100, description: 'default 0' },
      max: { type: 'integer', minimum: 0, maximum: 100, description: `default ${DEFAULT_SAN_MAX}` },
      regex: text(1024),
      computationRule,
    },
  };
  const labelRule = {
    type: 'object',
    ...closed,
    required: ['label'],
    properties: { label: { type: 'string', minLength: 1, maxLength: 191 }, value: text(1024), mandatory: { type: 'boolean' }, editable: { type: 'boolean' }, computationRule },
  };
  const single = { type: 'object', ...closed, properties: { value: text(1024), mandatory: { type: 'boolean' }, editable: { type: 'boolean' }, computationRule } };
  const keyPolicy = {
    type: 'object',
    ...closed,
    ...required(['authorizedKeyTypes', 'defaultKeyType', 'centralized', 'decentralized', 'preferredEnrollmentMode', 'escrow', 'p12passwordMode', 'showP12OnEnroll', 'showP12PasswordOnEnroll']),
    properties: {
      authorizedKeyTypes: { type: 'array', minItems: 1, items: keyType },
      defaultKeyType: keyType,
      centralized: { type: 'boolean' },
      decentralized: { type: 'boolean' },
      preferredEnrollmentMode: { type: 'string', enum: ['centralized', 'decentralized'] },
      escrow: { type: 'boolean' },
      p12passwordMode: { type: 'string', enum: ['generated', 'manual'] },
      passwordPolicy: { type: 'string', minLength: 1, maxLength: 191, description: 'Password policy name; absent: Default' },
      showP12OnEnroll: { type: 'boolean' },
      showP12PasswordOnEnroll: { type: 'boolean' },
      showP12OnRecover: { type: 'boolean', description: 'Display hint (Horizon cryptoPolicy); absent until set' },
      showP12PasswordOnRecover: { type: 'boolean', description: 'Display hint (Horizon cryptoPolicy); absent until set' },
    },
  };
  const rights = { type: 'object', ...closed, properties: { direct: principalList, request: principalList } };
  const authorizations = {
    type: 'object',
    ...closed,
    ...required(['workflows', 'approve', 'selfApproval']),
    properties: {
      workflows: { type: 'object', ...closed, properties: Object.fromEntries(WORKFLOWS.map((w) => [w, rights])) },
      approve: principalList,
      selfApproval: { type: 'boolean' },
    },
  };
  return {
    type: 'object',
    ...closed,
    required: input ? ['name', 'pkiConnector'] : ['_id', 'name', 'module', 'enabled', 'pkiConnector', 'keyPolicy', 'validityDays', 'keyUsage', 'extendedKeyUsage', 'subject', 'sans', 'labels', 'owner', 'team', 'contactEmail', 'authorizations', 'authorizationMode', 'challenge', 'version', 'createdAt', 'updatedAt', 'authorizationLevels', 'certificateTemplate', 'cryptoPolicy', 'requestsPolicy', 'selfPermissions'],
    properties: {
      _id: { type: 'string' },
      version: { type: 'integer' },
      createdAt: { type: 'integer' },
      updatedAt: { type: 'integer' },
      name: profileNameSchema,
      module: moduleSchema,
      enabled: { type: 'boolean' },
      description: input ? { ...localizedInput, description: 'A list of {lang, value}; a plain string is English' } : localizedOutput,
      displayName: input ? { ...localizedInput, description: 'A list of {lang, value}; a plain string is English' } : localizedOutput,
      pkiConnector: { type: 'string', minLength: 1, maxLength: 191, description: 'A PKI connector of /api/v1/pki/connectors/' },
      keyPolicy,
      validityDays: { type: 'integer', minimum: 1, maximum: 36500 },
      keyUsage: { type: 'array', maxItems: KEY_USAGES.length, items: { type: 'string', enum: [...KEY_USAGES] }, description: 'keyEncipherment is dropped for non-RSA keys' },
      extendedKeyUsage: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 64, description: 'serverAuth, clientAuth, codeSigning, emailProtection, … or an OID' } },
      subject: { type: 'array', maxItems: 50, items: subjectRule },
      sans: { type: 'array', maxItems: SAN_TYPES.length, items: sanRule },
      labels: { type: 'array', maxItems: 100, items: labelRule },
      owner: single,
      team: single,
      contactEmail: single,
      authorizations,
      authorizationMode: {
        type: 'string',
        enum: input ? ['standard', 'challenge', 'authorized'] : ['standard', 'challenge'],
        description: 'challenge: an approved WebRA enroll answers a one-time challenge; authorized (Horizon) is standard',
      },
      challenge: {
        type: 'object',
        ...closed,
        properties: { validityMinutes: { type: 'integer', minimum: 1, maximum: 525600 }, passwordPolicy: { type: 'string', minLength: 1, maxLength: 191 } },
      },
      protocols: {
        type: 'object',
        maxProperties: 16,
        propertyNames: { pattern: '^[a-z][a-z0-9-]{0,63}$' },
        additionalProperties: { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } }, additionalProperties: true },
        description: 'Enrollment protocols served on this profile, by name (acme, est, scep…): {enabled, …the protocol plugin\'s settings}',
      },
      ...horizonSchemas(input),
    },
  };
}

/** What a client sends (POST, PUT): every field but name and pkiConnector optional. */
export const profileInputSchema = schemas(true);

/** The API shape of a profile (ProfileView), every default filled in. */
export const profileSchema = { $id: 'CertificateProfile', ...schemas(false) };

export const profileNameParams = { type: 'object', required: ['name'], properties: { name: profileNameSchema } } as const;
