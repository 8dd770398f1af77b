import { TRIGGER_EVENT_NAMES } from './events.js';
import { TRIGGER_TYPES } from './model.js';

/** Trigger names are path segments (GET/DELETE :name, the run route): no slash. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;

const eventName = { type: 'string', description: `One of: ${TRIGGER_EVENT_NAMES.join(', ')}` } as const;

/** The API shape of a trigger (TriggerView). */
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
    events: { type: 'array', items: eventName },
    thresholds: { type: 'array', items: { type: 'integer' }, description: 'Days before expiry (expiring only)' },
    query: { type: ['string', 'null'], description: 'HCQL query narrowing the certificates the trigger fires for' },
    triggerType: { type: 'string', enum: [...TRIGGER_TYPES] },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
  },
} as const;

/**
 * What a client sends (POST, PUT). `_id`, `createdAt` and `updatedAt` echoed back from a GET are
 * accepted and ignored; other unknown fields are refused. Deeper checks (channel, events, target,
 * query) are the service's, each with its own code.
 */
export const triggerInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'channel', 'events'],
  properties: {
    _id: { type: 'string' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    name: nameSchema,
    description: { type: ['string', 'null'], maxLength: 2000 },
    enabled: { type: 'boolean' },
    channel: { type: 'string', minLength: 1, maxLength: 64 },
    target: { type: 'object', additionalProperties: true },
    events: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', maxLength: 32 } },
    thresholds: { type: 'array', maxItems: 20, items: { type: 'integer', minimum: 1, maximum: 3650 } },
    query: { type: ['string', 'null'], maxLength: 4000 },
    triggerType: { type: 'string', enum: [...TRIGGER_TYPES] },
  },
} as const;

/** PATCH on the collection: enable or disable several triggers at once. */
export const triggerPatchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['names', 'enabled'],
  properties: {
    names: { type: 'array', minItems: 1, maxItems: 500, items: nameSchema },
    enabled: { type: 'boolean' },
  },
} as const;

export const nameParams = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;
