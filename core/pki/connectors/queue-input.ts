import { ProblemError } from '../../errors/index.js';
import { parseFiniteDuration } from '../../http/finite-duration.js';
import { DEFAULT_QUEUE_LIMITS, DEFAULT_QUEUE_SETTINGS, type QueueRecord } from './model.js';
import type { QueueFields } from './repository.js';

/** What a client sends for a PKI queue (POST, PUT); fields echoed from a GET are accepted and ignored. */
export interface QueueInput {
  name: string;
  description?: string | null;
  retries?: number;
  initialDelaySeconds?: number;
  maxDelaySeconds?: number;
  paused?: boolean;
  size?: number | null;
  clusterWide?: boolean | null;
  throttleDuration?: string | null;
  throttleParallelism?: number | null;
}

/** The largest value of an integer column on both engines. */
const MAX_INT = 2_147_483_647;

const invalid = (detail: string): ProblemError => new ProblemError('PKI-QUEUE-002', { detail });

/** A positive whole number or null (no bound); PKI-QUEUE-002 otherwise. */
function bound(name: string, value: number | null): number | null {
  if (value === null) return null;
  if (!Number.isInteger(value) || value < 1 || value > MAX_INT) throw invalid(`${name} must be a whole number from 1 to ${MAX_INT}, or null for no bound (got ${value})`);
  return value;
}

/**
 * The queue to store: `input` over `current` (PUT: a field left out keeps its value; null clears a bound) or
 * over the defaults (POST). Checked here rather than by the route's JSON schema so a client gets PKI-QUEUE-002
 * (validation, the suffix Horizon clients read) with the reason, not the generic HTTP-003. Horizon's rules
 * (horizon-mcp src/tools/config/pki-queues.ts): size > 0; throttleParallelism > 0; throttleDuration a
 * positive FiniteDuration and only with throttleParallelism.
 */
export function queueFields(input: QueueInput, current?: QueueRecord): QueueFields {
  return checkQueue(mergeQueue(input, current));
}

/** `input` over `current` or the defaults, unchecked (the configuration registry's normalize: config-type.ts). */
export function mergeQueue(input: QueueInput, current?: Omit<QueueFields, 'name'>): QueueFields {
  const base: Omit<QueueFields, 'name'> = current ?? { ...DEFAULT_QUEUE_SETTINGS, ...DEFAULT_QUEUE_LIMITS, description: null };
  const keep = <T>(sent: T | undefined, stored: T): T => (sent === undefined ? stored : sent);
  return {
    name: input.name,
    description: keep(input.description, base.description),
    retries: keep(input.retries, base.retries),
    initialDelaySeconds: keep(input.initialDelaySeconds, base.initialDelaySeconds),
    maxDelaySeconds: keep(input.maxDelaySeconds, base.maxDelaySeconds),
    paused: keep(input.paused, base.paused),
    size: keep(input.size, base.size),
    throttleParallelism: keep(input.throttleParallelism, base.throttleParallelism),
    throttleDuration: keep(input.throttleDuration, base.throttleDuration),
    // Horizon's default (false), also for a client that clears it.
    clusterWide: keep(input.clusterWide, base.clusterWide) ?? false,
  };
}

/** The queue as given when it keeps Horizon's rules; PKI-QUEUE-002 naming the first it breaks. */
export function checkQueue(fields: QueueFields): QueueFields {
  bound('size', fields.size);
  bound('throttleParallelism', fields.throttleParallelism);
  if (fields.maxDelaySeconds < fields.initialDelaySeconds) throw invalid('maxDelaySeconds is smaller than initialDelaySeconds');
  if (fields.throttleDuration !== null) {
    const ms = parseFiniteDuration(fields.throttleDuration);
    if (ms === null || ms <= 0) throw invalid(`throttleDuration must be a positive duration such as "1 second", "500 ms" or "5 minutes" (got ${JSON.stringify(fields.throttleDuration)})`);
    if (fields.throttleParallelism === null) throw invalid('throttleDuration needs throttleParallelism: the most connector calls the queue starts within each throttleDuration');
  }
  return fields;
}
