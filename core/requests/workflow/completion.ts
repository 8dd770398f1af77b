import type { Knex } from 'knex';
import { ProblemError } from '../../errors/index.js';
import { LIFECYCLE_EVENT_CODES as L } from '../../events/codes.js';
import type { CertificateObject, KeyValue } from '../../inventory/types.js';
import type { CompletionHandlers, FinalIssue, FinalRevoke } from '../../pki/connectors/types.js';
import { encodePkcs12 } from '../../pki/pkcs12/encode.js';
import { parseCertificatePem } from '../../pki/x509/parse.js';
import type { RequestLedger } from './ledger.js';
import { derOf, type Plan } from './plan.js';

/**
 * The PKI gateway's completion handlers for requests: the final answer of a connector applied to its request
 * inside the queue's transaction (the certificate recorded once, the request completed or denied, the events).
 * They write through `trx` only: the gateway may run them again after a rollback (core/db/group-commit.ts).
 */
export class Completions implements CompletionHandlers {
  constructor(private readonly ledger: RequestLedger) {}

  /** The gateway's `issued`: the certificate once, the request completed, the event — in `trx`. */
  async issued(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalIssue): Promise<void> {
    // A caller on this node waiting for this issuance knows the request: only its row is read then.
    const known = this.ledger.waiting(tenant, requestId)?.known();
    const stored = known ? await this.ledger.store.getKnowing(tenant, requestId, known, { trx }) : await this.ledger.store.get(tenant, requestId, { trx });
    if (!stored || stored.request.status !== 'approved') return;
    const r = stored.request;
    const plan = (r.requestedX509Data ?? {}) as Plan;
    const lifecycle = r.workflow === 'renew' ? L.renewed : L.issued;
    if (outcome.status === 'rejected') {
      await this.ledger.store.update(tenant, requestId, stored.version, { status: 'denied', error: outcome.reason, retryAt: null }, { trx, base: stored });
      await this.ledger.secrets.drop(trx, tenant, requestId, ['key', 'password']);
      await this.ledger.eventsIn(trx, [
        { tenant, code: lifecycle, status: 'failure', objectType: 'certificate', objectId: null, payload: { requestId, profile: r.profile, workflow: r.workflow, reason: outcome.reason } },
        { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: requestId, payload: { ...this.ledger.payloadOf(r), error: outcome.reason } },
      ]);
      return;
    }
    const repo = this.ledger.services.inventory.repository;
    // A decentralized enrollment (the key is the requester's, behind the CSR) has no key secret.
    const keyPem = plan.mode === 'decentralized' ? null : await this.ledger.secrets.peek(trx, tenant, requestId, 'key');
    const escrowed = Boolean(keyPem && plan.escrow);
    const metadata: KeyValue[] = [...r.metadata.filter((m) => m.key !== 'pki_connector'), { key: 'pki_connector', value: plan.pkiConnector ?? '' }];
    if (r.workflow === 'renew' && r.certificateId) metadata.push({ key: 'previous_certificate_id', value: r.certificateId });
    let certificateId: string;
    let certificate: CertificateObject | null = null;
    // DN and serial for the event: what the inventory parsed of it, else (recorded already) a parse here.
    let info: { dn: string; serial: string };
    try {
      const inserted = await repo.insert(
        tenant,
        {
          certificate: outcome.certificatePem,
          module: r.module,
          profile: r.profile,
          owner: plan.owner ?? null,
          team: plan.team ?? null,
          contactEmail: plan.contactEmail ?? null,
          labels: r.labels,
          metadata,
          holderId: r.holderId,
          escrowed,
        },
        { trx },
      );
      certificateId = inserted._id;
      certificate = inserted;
      info = inserted;
    } catch (err) {
      // Recorded already (a retry after a crash, or the same certificate twice): link it.
      if (!(err instanceof ProblemError && err.code === 'CRT-004')) throw err;
      const parsed = parseCertificatePem(outcome.certificatePem);
      info = parsed;
      certificateId = (await repo.idOfThumbprint(tenant, parsed.thumbprint, trx))!;
    }
    if (keyPem) {
      const password = await this.ledger.secrets.peek(trx, tenant, requestId, 'password');
      const p12 = encodePkcs12({ privateKeyPkcs8Der: derOf(keyPem), certificatesDer: [derOf(outcome.certificatePem), ...outcome.chainPem.map(derOf)], password: password ?? '', friendlyName: plan.subject });
      await this.ledger.secrets.put(trx, tenant, requestId, 'pkcs12', Buffer.from(p12).toString('base64'));
      if (escrowed) await this.ledger.secrets.escrow(trx, tenant, certificateId, requestId, keyPem);
      await this.ledger.secrets.drop(trx, tenant, requestId, ['key']);
    }
    if (r.workflow === 'renew' && r.certificateId && r.certificateId !== certificateId) {
      const previous = await repo.get(tenant, r.certificateId, trx);
      if (previous) await repo.update(tenant, previous._id, { metadata: [...previous.metadata.filter((m) => m.key !== 'renewed_certificate_id'), { key: 'renewed_certificate_id', value: certificateId }] }, { trx });
    }
    const completed = await this.ledger.store.update(tenant, requestId, stored.version, { status: 'completed', certificateId, retryAt: null, error: null }, { trx, base: stored });
    const waiting = this.ledger.waiting(tenant, requestId);
    if (waiting && certificate && completed.outcome === 'updated') {
      const done = { stored: completed.stored, certificate };
      // Handed to the caller once committed (a rolled-back completion hands nothing).
      trx.executionPromise.then(
        () => {
          if (this.ledger.waiting(tenant, requestId) === waiting) waiting.done = done;
        },
        () => undefined,
      );
    }
    await this.ledger.eventsIn(trx, [
      {
        tenant,
        code: lifecycle,
        principal: r.requester ?? null,
        objectType: 'certificate',
        objectId: certificateId,
        payload: r.workflow === 'renew' ? { requestId, profile: r.profile, previousCertificateId: r.certificateId ?? null } : { requestId, profile: r.profile, workflow: r.workflow, pkiConnector: plan.pkiConnector ?? null, dn: info.dn, serial: info.serial },
      },
      { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: requestId, payload: { ...this.ledger.payloadOf(r), certificateId } },
    ]);
  }

  /** The gateway's `revoked`: the inventory certificate revoked, the request completed — in `trx`. */
  async revoked(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalRevoke): Promise<void> {
    const stored = await this.ledger.store.get(tenant, requestId, { trx });
    if (!stored || stored.request.status !== 'approved') return;
    const r = stored.request;
    const plan = (r.requestedX509Data ?? {}) as Plan;
    if (outcome.status === 'rejected') {
      await this.ledger.store.update(tenant, requestId, stored.version, { status: 'denied', error: outcome.reason, retryAt: null }, { trx, base: stored });
      await this.ledger.eventsIn(trx, [
        { tenant, code: L.revoked, status: 'failure', objectType: 'certificate', objectId: r.certificateId ?? null, payload: { requestId, profile: r.profile, reason: outcome.reason } },
        { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: requestId, payload: { ...this.ledger.payloadOf(r), error: outcome.reason } },
      ]);
      return;
    }
    const reason = plan.reason?.upper ?? 'UNSPECIFIED';
    await this.ledger.services.inventory.repository.update(tenant, r.certificateId!, { revoked: true, revocationDate: this.ledger.services.clock(), revocationReason: reason }, { trx });
    await this.ledger.store.update(tenant, requestId, stored.version, { status: 'completed', retryAt: null, error: null }, { trx, base: stored });
    await this.ledger.eventsIn(trx, [
      { tenant, code: L.revoked, principal: r.requester ?? null, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId, profile: r.profile, reason } },
      { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: requestId, payload: { ...this.ledger.payloadOf(r), certificateId: r.certificateId ?? null } },
    ]);
  }
}
