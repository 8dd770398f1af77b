/**
 * JSON schemas of the Horizon keys of a certificate profile (index.ts), for the input schema (closed, every
 * member optional and nullable as Horizon's models have them) and the answer (what horizonKeysOf writes).
 * Shapes: the vendor's request schema (horizon-mcp src/tools/config/schemas/certificate-profiles.schema.json,
 * $defs WebRAProfile and what it references) and its v2 Go models (docs/WebRAProfileResponse.md).
 */
import { KEY_TYPES } from '../model.js';
import { ACTIONS } from './levels.js';
import { REQUEST_WORKFLOWS, SELF } from './fixed.js';

const nullable = (type: string) => ({ type: [type, 'null'] }) as const;
const str = (max: number) => ({ type: ['string', 'null'], maxLength: max }) as const;
const strings = { type: ['array', 'null'], maxItems: 100, items: { type: 'string', maxLength: 1024 } } as const;
const anyObjects = { type: ['array', 'null'], maxItems: 100, items: { type: 'object' } } as const;

export function horizonSchemas(input: boolean): Record<string, unknown> {
  const closed = input ? { additionalProperties: false } : {};
  const opt = (type: string) => (input ? nullable(type) : { type });
  const required = (names: string[]) => (input ? {} : { required: names });
  const editable = {
    editableByRequester: { ...opt('boolean'), description: 'Certwright: editable' },
    editableByApprover: { ...opt('boolean'), description: 'Always false: a Certwright approver cannot edit a request (true is refused)' },
  };
  const computationRule = { ...str(4096), description: 'A computation rule computing the value from the request (see POST /api/v1/templatestring/playground)' };
  const level = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    required: ['accessLevel'],
    properties: {
      accessLevel: { type: 'string', enum: ['everyone', 'authenticated', 'authorized'], description: 'authenticated: the list holds `*`; authorized: a grant is needed; everyone is refused' },
      ...(input ? { enforcedIdentityProviders: { ...anyObjects, description: 'Refused when not empty' } } : {}),
    },
  };
  const authorizationLevels = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    ...required(['search', 'update', 'requestUpdate', 'approveUpdate']),
    description:
      'Horizon form of `authorizations`: <w> = workflows.<w>.direct, request<W> = workflows.<w>.request, approve<W> = approve (one list: the approve levels sent must agree), <w>Api = <w>, search and auditRequest always authorized',
    properties: Object.fromEntries(ACTIONS.map((a) => [a, level])),
  };
  const keyType = input ? { type: ['string', 'null'], enum: [...KEY_TYPES, null] } : { type: 'string', enum: [...KEY_TYPES] };
  const cryptoPolicy = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    ...required(['authorizedKeyTypes', 'centralized', 'decentralized', 'defaultKeyType', 'escrow', 'p12passwordMode', 'p12storeEncryptionType', 'preferredEnrollmentMode', 'showP12OnEnroll', 'showP12PasswordOnEnroll']),
    description: 'Horizon form of `keyPolicy`',
    properties: {
      authorizedKeyTypes: { type: input ? ['array', 'null'] : 'array', minItems: 1, items: { type: 'string', enum: [...KEY_TYPES] } },
      centralized: opt('boolean'),
      decentralized: opt('boolean'),
      defaultKeyType: { ...keyType, description: 'Left out: kept, or the first authorized key type' },
      escrow: opt('boolean'),
      p12passwordMode: input ? { type: ['string', 'null'], enum: ['random', 'manual', 'generated', null] } : { type: 'string', enum: ['random', 'manual'], description: 'random: keyPolicy.p12passwordMode generated' },
      p12passwordPolicy: { ...(input ? str(191) : { type: 'string' }), description: 'keyPolicy.passwordPolicy' },
      p12storeEncryptionType: { ...(input ? str(64) : { type: 'string' }), description: 'Always AES (PBES2, AES-256): other values are refused' },
      preferredEnrollmentMode: input ? { type: ['string', 'null'], enum: ['centralized', 'decentralized', null] } : { type: 'string', enum: ['centralized', 'decentralized'] },
      showP12OnEnroll: opt('boolean'),
      showP12PasswordOnEnroll: opt('boolean'),
      showP12OnRecover: opt('boolean'),
      showP12PasswordOnRecover: opt('boolean'),
      ...(input ? { keyAvailability: { ...str(64), description: 'Refused when set' } } : {}),
    },
  };
  const dnElement = {
    type: 'object',
    ...closed,
    required: input ? ['type'] : ['type', 'mandatory', 'editableByRequester', 'editableByApprover'],
    properties: {
      type: { type: 'string', minLength: 1, maxLength: 64, description: 'CN, OU, O, … (repeated types are numbered in order: the second OU is ou.2)' },
      value: str(1024),
      mandatory: opt('boolean'),
      ...editable,
      regex: str(1024),
      computationRule,
    },
  };
  const sanElement = {
    type: 'object',
    ...closed,
    required: input ? ['type'] : ['type', 'min', 'max', 'editableByRequester', 'editableByApprover'],
    properties: {
      type: { type: 'string', minLength: 1, maxLength: 64 },
      min: input ? { type: ['integer', 'null'], minimum: 0, maximum: 100 } : { type: 'integer' },
      max: input ? { type: ['integer', 'null'], minimum: 0, maximum: 100 } : { type: 'integer' },
      regex: str(1024),
      ...editable,
      computationRule,
    },
  };
  const labelElement = {
    type: 'object',
    ...closed,
    required: input ? ['label'] : ['label', 'mandatory', 'editableByRequester', 'editableByApprover'],
    properties: {
      label: { type: 'string', minLength: 1, maxLength: 191 },
      value: str(1024),
      mandatory: opt('boolean'),
      ...editable,
      computationRule,
      ...(input ? { regex: { ...str(1024), description: 'Refused when set' }, enum: strings, suggestions: strings } : {}),
    },
  };
  const policy = (withValue: boolean) => ({
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    ...required(['mandatory', 'editableByRequester', 'editableByApprover', ...(withValue ? ['value'] : [])]),
    properties: {
      mandatory: opt('boolean'),
      ...editable,
      ...(withValue ? { value: str(1024) } : {}),
      computationRule,
      ...(input ? { description: anyObjects, ...(withValue ? { regex: str(1024), whitelist: strings } : {}) } : {}),
    },
  });
  const list = (items: object) => ({ type: input ? ['array', 'null'] : 'array', maxItems: 100, items });
  const certificateTemplate = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    ...required(['subject', 'sans', 'labels', 'ownerPolicy', 'teamPolicy', 'contactEmailPolicy']),
    description: 'Horizon form of subject, sans, labels, owner, team and contactEmail (owner.value and SAN default values have no Horizon form)',
    properties: {
      subject: list(dnElement),
      sans: list(sanElement),
      labels: list(labelElement),
      ownerPolicy: policy(false),
      teamPolicy: policy(true),
      contactEmailPolicy: policy(true),
      ...(input ? { extensions: { ...anyObjects, description: 'Refused when not empty' }, metadataPolicies: { ...anyObjects, description: 'Refused when not empty' } } : {}),
    },
  };
  const requestsPolicy = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    description: "Request lifetimes: always empty (Certwright's pending requests do not expire; a lifetime is refused)",
    properties: Object.fromEntries(REQUEST_WORKFLOWS.map((w) => [w, str(64)])),
  };
  const selfPermissions = {
    type: input ? ['object', 'null'] : 'object',
    ...closed,
    ...required([...SELF]),
    description: 'Always false: Certwright grants no self-service right (true is refused)',
    properties: Object.fromEntries(SELF.map((flag) => [flag, opt('boolean')])),
  };
  return {
    authorizationLevels,
    certificateTemplate,
    cryptoPolicy,
    requestsPolicy,
    selfPermissions,
    passwordPolicy: { ...(input ? { ...str(191), minLength: 1 } : { type: 'string' }), description: 'Horizon form of challenge.passwordPolicy' },
  };
}
