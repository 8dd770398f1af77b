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
    type: {
      type: 'string',
      description: 'A PKI connector type an installed plugin provides (local-ca, acme-upstream, …), or the Horizon name it was written with (integrated = local-ca)',
    },
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

/**
 * What a client sends (POST, PUT); fields echoed from a GET are accepted and ignored. Settings go under
 * `configuration` or, Horizon's form, at the top level (settings.ts: any other key must be a property of the
 * type's configSchema or a Horizon field of its alias, else PKI-CONN-002).
 */
export const connectorInputSchema = {
  type: 'object',
  additionalProperties: { description: "A setting of the connector's type at the top level (Horizon's form): a property of its configSchema; null puts it back to its default" },
  required: ['name', 'type'],
  properties: {
    _id: { type: 'string' },
    version: { type: 'integer' },
    createdAt: { type: 'integer' },
    updatedAt: { type: 'integer' },
    createdBy: { type: ['string', 'null'] },
    updatedBy: { type: ['string', 'null'] },
    name: nameSchema,
    type: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'An installed PKI connector type, or its Horizon name (integrated = local-ca; answered back as sent). PKI-CONN-006 names the installed types',
    },
    description: { type: ['string', 'null'], maxLength: 2000 },
    enabled: { type: 'boolean' },
    queue: nameSchema,
    configuration: { type: 'object', additionalProperties: true, description: "The connector's settings (its type's configSchema); top-level settings win over the same key here" },
    cryptoType: { type: ['string', 'null'], description: 'Horizon field of type integrated (local-ca): only "legacy" (classical keys)' },
    crlLifetime: { type: ['string', 'null'], description: 'Horizon field of type integrated (local-ca): CRL validity as a duration ("7 days"), stored as crlValidityHours' },
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

/** Horizon's bounds of a queue (horizon-mcp src/tools/config/pki-queues.ts), enforced by the gateway. */
const queueLimitProperties = {
  size: { type: ['integer', 'null'], description: 'Most items the queue holds at once, waiting or running, across all nodes (the items are shared rows); a new one beyond answers 503 PKI-QUEUE-006. Null: no bound. At least 1' },
  throttleParallelism: {
    type: ['integer', 'null'],
    description: 'Most connector calls of the queue in flight at once; with throttleDuration also the most started within each such window. Null: no throttle. At least 1',
  },
  throttleDuration: { type: ['string', 'null'], description: 'The window of throttleParallelism, a duration such as "1 second" or "30 seconds" (needs throttleParallelism)' },
  clusterWide: { type: ['boolean', 'null'], description: 'The throttle is counted across all nodes (in the database) instead of on each node. Default false' },
} as const;

export const queueSchema = {
  $id: 'PkiQueue',
  type: 'object',
  required: ['_id', 'name', 'retries', 'initialDelaySeconds', 'maxDelaySeconds', 'paused', 'size', 'throttleParallelism', 'throttleDuration', 'clusterWide', 'state'],
  properties: {
    _id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    retries: { type: 'integer', description: 'Failed attempts retried before the queue gives up' },
    initialDelaySeconds: { type: 'integer', description: 'Delay before the first retry; doubles for each next one' },
    maxDelaySeconds: { type: 'integer', description: 'Longest delay between retries' },
    paused: { type: 'boolean', description: 'Paused: nothing of this queue is sent to its connectors' },
    ...queueLimitProperties,
    clusterWide: { type: 'boolean', description: queueLimitProperties.clusterWide.description },
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
    ...queueLimitProperties,
  },
} as const;
