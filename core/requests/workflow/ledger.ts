import type { Knex } from 'knex';
import { ProblemError } from '../../errors/index.js';
import type { NewEventInput } from '../../events/store.js';
import type { CertificateObject } from '../../inventory/types.js';
import type { CoreServices } from '../../services.js';
import { RequestStore } from '../store.js';
import type { RequestObject, RequestPatch, StoredRequest } from '../types.js';
import { RequestSecrets } from './secrets.js';

type WebraEvent = Omit<NewEventInput, 'module' | 'status'> & { status?: NewEventInput['status'] };

/** An issuance a caller on this node waits for (RequestWorkflows.issueThrough, Completions.issued). */
export interface Waiting {
  /** The request as the caller stored it (the completion then reads only its row). */
  known: () => StoredRequest | undefined;
  /** Left by the completion once its transaction committed: what it wrote, so the answer is not read back. */
  done?: { stored: StoredRequest; certificate: CertificateObject };
}

/**
 * What the submitting side of the request workflows and their completion handlers share: the request store,
 * its sealed secrets, the webra events, optimistic transitions, and the issuances this node's callers wait for.
 */
export class RequestLedger {
  readonly store: RequestStore;
  readonly secrets: RequestSecrets;
  private readonly waits = new Map<string, Waiting>();

  constructor(readonly services: CoreServices) {
    this.store = new RequestStore(services.knex, services.clock);
    this.secrets = new RequestSecrets(services.knex, services.secrets, services.clock);
  }

  event(trx: Knex.Transaction, input: WebraEvent): Promise<unknown> {
    return this.services.events.append({ module: 'webra', status: 'success', ...input }, { trx });
  }

  /**
   * Several events in order under one lock of the chain head (EventStore.record: in a group commit, chained
   * at the group's end), in a transaction that has written the request already (every caller appends after
   * its request write).
   */
  eventsIn(trx: Knex.Transaction, inputs: WebraEvent[]): Promise<void> {
    return this.services.events.record(
      inputs.map((input) => ({ module: 'webra', status: 'success' as const, ...input })),
      { trx, written: true },
    );
  }

  payloadOf(r: RequestObject): Record<string, unknown> {
    return { requestId: r._id, workflow: r.workflow, profile: r.profile, requester: r.requester ?? null };
  }

  /** Applies a patch at the version read; a concurrent transition wins and this one is refused (REQ-009). */
  async transition(trx: Knex.Transaction, stored: StoredRequest, tenant: string, patch: RequestPatch): Promise<StoredRequest> {
    const result = await this.store.update(tenant, stored.request._id, stored.version, patch, { trx, base: stored });
    if (result.outcome === 'updated') return result.stored;
    if (result.outcome === 'missing') throw new ProblemError('REQ-003');
    throw new ProblemError('REQ-009', { message: 'The request changed meanwhile (another decision was taken first)' });
  }

  wait(tenant: string, requestId: string, waiting: Waiting): void {
    this.waits.set(waitKey(tenant, requestId), waiting);
  }

  waiting(tenant: string, requestId: string): Waiting | undefined {
    return this.waits.get(waitKey(tenant, requestId));
  }

  /** The caller stops waiting: what the completion left, if anything. */
  endWait(tenant: string, requestId: string): Waiting['done'] {
    const done = this.waits.get(waitKey(tenant, requestId))?.done;
    this.waits.delete(waitKey(tenant, requestId));
    return done;
  }
}

const waitKey = (tenant: string, requestId: string): string => `${tenant}\u0000${requestId}`;
