/** Rows and API shapes of PKI connectors, PKI queues and queue items (migrations 0014, 0020). */
import type { QueueItemState } from './types.js';

export interface ConnectorRecord {
  id: string;
  tenant: string;
  name: string;
  /** The installed type (the plugin's). */
  type: string;
  /** The Horizon name the client gave the type (`integrated` for local-ca), answered as `type`; null: `type`. */
  wireType: string | null;
  description: string | null;
  enabled: boolean;
  queue: string;
  /** As stored: secret fields sealed (`{"$sealed": …}`). */
  configuration: Record<string, unknown>;
  version: number;
  createdAt: number;
  updatedAt: number;
  createdBy: string | null;
  updatedBy: string | null;
}

export interface ConnectorRow {
  id: string;
  tenant: string;
  name: string;
  type: string;
  wire_type?: string | null;
  description: string | null;
  enabled: number | boolean;
  queue: string;
  configuration: string;
  version: number | string;
  created_at: number | string;
  updated_at: number | string;
  created_by: string | null;
  updated_by: string | null;
}

export const connectorOfRow = (r: ConnectorRow): ConnectorRecord => ({
  id: r.id,
  tenant: r.tenant,
  name: r.name,
  type: r.type,
  wireType: r.wire_type ?? null,
  description: r.description,
  enabled: Boolean(r.enabled),
  queue: r.queue,
  configuration: JSON.parse(r.configuration) as Record<string, unknown>,
  version: Number(r.version),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  createdBy: r.created_by,
  updatedBy: r.updated_by,
});

export const rowOfConnector = (c: ConnectorRecord): ConnectorRow => ({
  id: c.id,
  tenant: c.tenant,
  name: c.name,
  type: c.type,
  wire_type: c.wireType,
  description: c.description,
  enabled: c.enabled,
  queue: c.queue,
  configuration: JSON.stringify(c.configuration),
  version: c.version,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  created_by: c.createdBy,
  updated_by: c.updatedBy,
});

export interface QueueSettings {
  retries: number;
  initialDelaySeconds: number;
  maxDelaySeconds: number;
  paused: boolean;
}

export const DEFAULT_QUEUE = 'default';
export const DEFAULT_QUEUE_SETTINGS: QueueSettings = { retries: 10, initialDelaySeconds: 30, maxDelaySeconds: 3600, paused: false };

/**
 * Horizon's bounds of a PKI queue (horizon-mcp src/tools/config/pki-queues.ts), enforced by the gateway
 * (gateway.ts, throttle.ts, queue.ts). Null: no bound.
 */
export interface QueueLimits {
  /** Most items the queue holds at once, waiting or running (a full queue refuses new ones: PKI-QUEUE-006). */
  size: number | null;
  /** Most connector calls of the queue in flight at once; with throttleDuration, also started per window. */
  throttleParallelism: number | null;
  /** The window of throttleParallelism, a FiniteDuration ("1 second"); needs throttleParallelism. */
  throttleDuration: string | null;
  /** The throttle is counted across all nodes (in the database) instead of on each node. */
  clusterWide: boolean;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = { size: null, throttleParallelism: null, throttleDuration: null, clusterWide: false };

export interface QueueRecord extends QueueSettings, QueueLimits {
  id: string;
  tenant: string;
  name: string;
  description: string | null;
  createdAt: number;
  updatedAt: number;
  createdBy: string | null;
  updatedBy: string | null;
}

export interface QueueRow {
  id: string;
  tenant: string;
  name: string;
  description: string | null;
  retries: number | string;
  initial_delay_seconds: number | string;
  max_delay_seconds: number | string;
  paused: number | boolean;
  size?: number | string | null;
  throttle_parallelism?: number | string | null;
  throttle_duration?: string | null;
  cluster_wide?: number | boolean;
  created_at: number | string;
  updated_at: number | string;
  created_by: string | null;
  updated_by: string | null;
}

const intOrNull = (v: number | string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

export const queueOfRow = (r: QueueRow): QueueRecord => ({
  id: r.id,
  tenant: r.tenant,
  name: r.name,
  description: r.description,
  retries: Number(r.retries),
  initialDelaySeconds: Number(r.initial_delay_seconds),
  maxDelaySeconds: Number(r.max_delay_seconds),
  paused: Boolean(r.paused),
  size: intOrNull(r.size),
  throttleParallelism: intOrNull(r.throttle_parallelism),
  throttleDuration: r.throttle_duration ?? null,
  clusterWide: Boolean(r.cluster_wide),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  createdBy: r.created_by,
  updatedBy: r.updated_by,
});

export const rowOfQueue = (q: QueueRecord): QueueRow => ({
  id: q.id,
  tenant: q.tenant,
  name: q.name,
  description: q.description,
  retries: q.retries,
  initial_delay_seconds: q.initialDelaySeconds,
  max_delay_seconds: q.maxDelaySeconds,
  paused: q.paused,
  size: q.size,
  throttle_parallelism: q.throttleParallelism,
  throttle_duration: q.throttleDuration,
  cluster_wide: q.clusterWide,
  created_at: q.createdAt,
  updated_at: q.updatedAt,
  created_by: q.createdBy,
  updated_by: q.updatedBy,
});

/** The queue's `state` member in GET answers. */
export interface QueueStateView {
  waiting: number;
  running: number;
  failed: number;
  /** Earliest due date of a waiting item (epoch ms), or null. */
  nextAttemptAt: number | null;
  /** Error of the most recently updated item that has one, or null. */
  lastError: string | null;
}

export type QueueOperation = QueueItemState['operation'];
export type QueueItemStatus = QueueItemState['state'];

export interface QueueItem {
  id: string;
  tenant: string;
  requestId: string;
  connector: string;
  queue: string;
  operation: QueueOperation;
  /** IssueRequest (issue) or RevokeRequest (revoke). */
  payload: Record<string, unknown>;
  state: QueueItemStatus;
  attempts: number;
  nextAttemptAt: number | null;
  leaseUntil: number | null;
  leaseOwner: string | null;
  pollToken: string | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface QueueItemRow {
  id: string;
  tenant: string;
  request_id: string;
  connector: string;
  queue: string;
  operation: string;
  payload: string;
  state: string;
  attempts: number | string;
  next_attempt_at: number | string | null;
  lease_until: number | string | null;
  lease_owner: string | null;
  poll_token: string | null;
  last_error: string | null;
  created_at: number | string;
  updated_at: number | string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const itemOfRow = (r: QueueItemRow): QueueItem => ({
  id: r.id,
  tenant: r.tenant,
  requestId: r.request_id,
  connector: r.connector,
  queue: r.queue,
  operation: r.operation as QueueOperation,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  state: r.state as QueueItemStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: num(r.next_attempt_at),
  leaseUntil: num(r.lease_until),
  leaseOwner: r.lease_owner,
  pollToken: r.poll_token,
  lastError: r.last_error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});
