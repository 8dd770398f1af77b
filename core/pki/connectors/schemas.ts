/** JSON schemas of the PKI connector and PKI queue routes. */

/** Names are path segments (GET/DELETE :name, /pki/:connector/…): no slash. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '^[^/]+$' } as const;
export const nameParams = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;

export const connectorSchema = {
  $id: 'PkiConnector',
  type: 'object',
  required: ['_id', 'name', 'type', 'enabled', 'queue', 'configuration', 'version', 'createdAt', 'updatedAt'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', description: 'A PKI connector type an installed plugin provides (local-ca, acme-upstream, …)' },
    description: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    queue: { type: 'string', description: 'The PKI queue that retries its pending and failed work' },
    configuration: { type: 'object', additionalProperties: true, description: "The connector's configuration (its manifest's configSchema); secret fields read ********" },
    version: { type: 'integer', description: 'Grows with every change' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    createdBy: { type: ['string', 'null'] },
    updatedBy: { type: ['string', 'null'] },
  },
} as const;

/** What a client sends (POST, PUT); fields echoed from a GET are accepted and ignored. */
export const connectorInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    _id: { type: 'string' },
    version: { type: 'integer' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    createdBy: { type: ['string', 'null'] },
    updatedBy: { type: ['string', 'null'] },
    name: nameSchema,
    type: { type: 'string', minLength: 1, maxLength: 64 },
    description: { type: ['string', 'null'], maxLength: 2000 },
    enabled: { type: 'boolean' },
    queue: nameSchema,
    configuration: { type: 'object', additionalProperties: true },
  },
} as const;

export const nameBodySchema = { type: 'object', required: ['name'], properties: { name: nameSchema } } as const;

export const connectResultSchema = {
  type: 'object',
  required: ['ok'],
  properties: { ok: { type: 'boolean' }, detail: { type: 'string' } },
} as const;

export const materialsSchema = {
  type: 'object',
  required: ['chain'],
  properties: { chain: { type: 'array', items: { type: 'string' }, description: 'The CA chain, issuing CA first, PEM' } },
} as const;

export const queueSchema = {
  $id: 'PkiQueue',
  type: 'object',
  required: ['_id', 'name', 'retries', 'initialDelaySeconds', 'maxDelaySeconds', 'paused', 'state'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    retries: { type: 'integer', description: 'Failed attempts retried before the queue gives up' },
    initialDelaySeconds: { type: 'integer', description: 'Delay before the first retry; doubles for each next one' },
    maxDelaySeconds: { type: 'integer', description: 'Longest delay between retries' },
    paused: { type: 'boolean', description: 'Paused: nothing of this queue is sent to its connectors' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    state: {
      type: 'object',
      required: ['waiting', 'running', 'failed', 'nextAttemptAt', 'lastError'],
      properties: {
        waiting: { type: 'integer' },
        running: { type: 'integer' },
        failed: { type: 'integer' },
        nextAttemptAt: { type: ['integer', 'null'] },
        lastError: { type: ['string', 'null'] },
      },
    },
  },
} as const;

export const queueInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    _id: { type: 'string' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    state: { type: 'object' },
    name: nameSchema,
    description: { type: ['string', 'null'], maxLength: 2000 },
    retries: { type: 'integer', minimum: 0, maximum: 1000 },
    initialDelaySeconds: { type: 'integer', minimum: 1, maximum: 86400 },
    maxDelaySeconds: { type: 'integer', minimum: 1, maximum: 604800 },
    paused: { type: 'boolean' },
  },
} as const;
