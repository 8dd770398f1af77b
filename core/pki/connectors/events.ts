import type { EventCodeEntry } from '../../events/catalogue.js';

const connector = (code: string, verb: string): EventCodeEntry => ({
  code,
  module: 'pki',
  description: `A PKI connector was ${verb} (/api/v1/pki/connectors/)`,
  statuses: ['success'],
  objectType: 'pki-connector',
  payload: { connector: 'The connector as the API shows it (secret configuration fields read ********)' },
});

const queue = (code: string, verb: string): EventCodeEntry => ({
  code,
  module: 'pki',
  description: `A PKI queue was ${verb} (/api/v1/pki/queues/; the built-in queue "default" is created on first use)`,
  statuses: ['success'],
  objectType: 'pki-queue',
  payload: { queue: 'The queue settings (name, description, retries, initialDelaySeconds, maxDelaySeconds, paused, size, throttleParallelism, throttleDuration, clusterWide)' },
});

/** Event codes raised by PKI connectors and PKI queues: spread into core/events/catalogue.ts. */
export const PKI_CONNECTOR_EVENTS: readonly EventCodeEntry[] = [
  connector('PKI-CONNECTOR-CREATED', 'created'),
  connector('PKI-CONNECTOR-UPDATED', 'updated'),
  connector('PKI-CONNECTOR-DELETED', 'deleted'),
  queue('PKI-QUEUE-CREATED', 'created'),
  queue('PKI-QUEUE-UPDATED', 'updated'),
  queue('PKI-QUEUE-DELETED', 'deleted'),
  {
    code: 'PKI-QUEUE-GAVE-UP',
    module: 'pki',
    description: 'A queued issuance or revocation used up the retries of its PKI queue: the request was told it was rejected',
    statuses: ['failure'],
    objectType: 'request',
    payload: { queue: 'PKI queue', connector: 'PKI connector', operation: 'issue or revoke', attempts: 'Attempts made', lastError: 'The last error' },
  },
];
