import { TRIGGER_EVENT_NAMES } from './events.js';
import { EVENT_NAMES_DESCRIPTION, horizonInputOnlyProperties, horizonProperties } from './horizon/schemas.js';
import { TRIGGER_TYPES } from './model.js';

/** Trigger names are path segments (GET/DELETE :name, the run route): no slash. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;

const eventName = { type: 'string', description: `One of: ${TRIGGER_EVENT_NAMES.join(', ')}` } as const;

/** The API shape of a trigger (TriggerView): Certwright's keys, `retries` when set, Horizon's keys for a trigger written in its shape. */
export const triggerSchema = {
  $id: 'Trigger',
  type: 'object',
  required: ['_id', 'name', 'enabled', 'channel', 'target', 'events', 'thresholds', 'triggerType'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    channel: { type: 'string', description: 'A trigger-channel type (log, webhook, email, …)' },
    target: {
      type: 'object',
      additionalProperties: true,
      description: "The channel's configuration (its manifest's targetSchema); secret fields that are set read ********",
    },
    events: { type: 'array', items: eventName, description: EVENT_NAMES_DESCRIPTION },
    thresholds: { type: 'array', items: { type: 'integer' }, description: 'Days before expiry (expiring only)' },
    query: { type: ['string', 'null'], description: 'HCQL query narrowing the certificates the trigger fires for' },
    triggerType: { type: 'string', enum: [...TRIGGER_TYPES] },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    ...horizonProperties,
  },
} as const;

/**
 * What a client sends (POST, PUT): Certwright's shape (`channel` required) or Horizon's (`type`
 * required; trigger-input.ts). `_id`, `createdAt` and `updatedAt` echoed back from a GET are accepted
 * and ignored; other unknown fields are refused. Deeper checks (channel, events, target, query, the
 * Horizon keys) are the service's, each with its own code.
 */
export const triggerInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  // Horizon's third-party types have no `events` (server-fixed there): they get their TRG-002, not a schema error.
  anyOf: [{ required: ['channel', 'events'] }, { required: ['type'] }],
  properties: {
    _id: { type: 'string' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    name: nameSchema,
    description: { type: ['string', 'null'], maxLength: 2000 },
    enabled: { type: 'boolean' },
    channel: { type: 'string', minLength: 1, maxLength: 64 },
    target: { type: 'object', additionalProperties: true },
    events: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', maxLength: 32 }, description: EVENT_NAMES_DESCRIPTION },
    thresholds: { type: 'array', maxItems: 20, items: { type: 'integer', minimum: 1, maximum: 3650 } },
    query: { type: ['string', 'null'], maxLength: 4000 },
    triggerType: { type: 'string', enum: [...TRIGGER_TYPES] },
    ...horizonProperties,
    ...horizonInputOnlyProperties,
  },
} as const;

/**
 * PATCH on the collection: `{names, enabled}` enables or disables several triggers at once;
 * `{name}` alone runs that trigger now as a test (horizon-mcp simulate_trigger); `{trigger}` runs the
 * trigger given, unsaved (the v2 Go SDK's TriggerTest: docs/TriggerTestRequest.md {trigger, dictionary?}).
 */
export const triggerPatchSchema = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['names', 'enabled'] }, { required: ['name'] }, { required: ['trigger'] }],
  properties: {
    names: { type: 'array', minItems: 1, maxItems: 500, items: nameSchema },
    enabled: { type: 'boolean' },
    name: nameSchema,
    trigger: { ...triggerInputSchema, description: 'The trigger to run, as POST takes it; not stored' },
    dictionary: {
      type: ['array', 'null'],
      maxItems: 200,
      items: { type: 'object', additionalProperties: false, properties: { key: { type: 'string', maxLength: 256 }, value: { type: ['string', 'null'], maxLength: 4096 } } },
      description: "Horizon's test dictionary [{key, value}]: given to the channel in the test event's payload.dictionary ({key: value})",
    },
  },
} as const;

/** GET on the collection: Horizon's TriggerList filters (horizon-go v2 api_trigger.go TriggerListExecute: `types` repeated, `module`). */
export const triggerListQuery = {
  type: 'object',
  properties: {
    types: { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 256 }, description: "Horizon trigger types (email, webhook, rest): repeated (types=email&types=rest) or comma-separated. Keeps the triggers written in Horizon's shape of those types." },
    module: { type: 'string', maxLength: 64, description: 'Accepted; keeps every trigger (a Certwright trigger is not bound to a module)' },
  },
} as const;

export const nameParams = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;
