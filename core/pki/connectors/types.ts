/**
 * The PKI gateway: what the request workflows (core/requests) use to issue and revoke through a profile's
 * PKI connector, and the queue that makes it durable. Implemented in this folder (issue 7).
 *
 * Durability ("nothing lost"): every issuance is a queue item written (committed) before the connector is
 * called, holding a lease while the caller's attempt runs. The connector's answer is applied by the
 * completion handler in one transaction that also deletes the item. A crash between the answer and that
 * transaction leaves the item: when its lease ends the queue job calls the connector again with the same
 * requestId (connectors deduplicate on it) and the handler records the certificate once.
 */
import type { Knex } from 'knex';
import type { IssueRequest, RevokeRequest } from '@certwright/sdk';

/** What became of an issuance, as the handler and the caller see it. */
export type IssueResult =
  | { status: 'issued'; certificatePem: string; chainPem: string[] }
  /** Pending at the CA, or a transient failure: the queue retries (`retryAt` epoch ms). */
  | { status: 'queued'; retryAt: number; detail?: string }
  /** The CA refused, the connector is misconfigured, or the queue gave up: final. */
  | { status: 'rejected'; reason: string };

export type RevokeResult = { status: 'revoked' } | { status: 'queued'; retryAt: number; detail?: string } | { status: 'rejected'; reason: string };

/** Final outcomes the queue hands to the request workflow (never `queued`). */
export type FinalIssue = Exclude<IssueResult, { status: 'queued' }>;
export type FinalRevoke = Exclude<RevokeResult, { status: 'queued' }>;

/**
 * Applies a final outcome inside `trx` (the queue deletes its item in the same transaction). Must be
 * idempotent: called again for the same request after a crash, it changes nothing twice.
 */
export interface CompletionHandlers {
  issued(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalIssue): Promise<void>;
  revoked(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalRevoke): Promise<void>;
}

/** The state of one request's queue item, for the request object (retryAt, retryCount, error). */
export interface QueueItemState {
  requestId: string;
  queue: string;
  connector: string;
  operation: 'issue' | 'revoke';
  state: 'running' | 'waiting' | 'failed';
  attempts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
}

export interface IssueOptions {
  /**
   * The caller's writes for a request that does not exist yet (its row, its event), committed in one
   * transaction with the queue item, before the connector is called. When no item can be written (the
   * connector is missing or disabled) they are committed alone before issue rejects; when they fail,
   * nothing is written and issue rejects with their error.
   */
  with?: (trx: Knex.Transaction) => Promise<void>;
}

export interface PkiGateway {
  /** The request workflow registers its completion handlers once, before jobs start. */
  setHandlers(handlers: CompletionHandlers): void;
  /**
   * Issues now through the tenant's connector `connector` (PKI-CONN-003 when missing or disabled). Writes the
   * queue item first; a final answer runs `handlers.issued` (one transaction with the item's removal) before
   * this resolves. `queued`: the request waits for the queue job.
   */
  issue(tenant: string, connector: string, request: IssueRequest, options?: IssueOptions): Promise<IssueResult>;
  /** Same for a revocation; `requestId` keys the queue item. */
  revoke(tenant: string, connector: string, requestId: string, request: RevokeRequest): Promise<RevokeResult>;
  /** The connector's CA chain (leaf-most first), PEM. */
  caChain(tenant: string, connector: string): Promise<string[]>;
  /** Whether the tenant has an enabled connector of this name. */
  exists(tenant: string, connector: string): Promise<boolean>;
  /** The queue item of a request, if it has one. */
  queueState(tenant: string, requestId: string): Promise<QueueItemState | null>;
  /** The connector's current CRL (DER, cached as /pki/<connector>/crl serves it); null when it signs none. */
  crl(tenant: string, connector: string): Promise<Uint8Array | null>;
}
