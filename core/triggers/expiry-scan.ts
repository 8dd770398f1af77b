import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isUniqueViolation } from '../db/unique.js';
import { LIFECYCLE_EVENT_CODES } from '../events/codes.js';
import type { EventStore } from '../events/store.js';
import { certificatesMatching } from './matching.js';
import type { Trigger } from './model.js';
import type { TriggerRepository } from './repository.js';

const DAY_MS = 86_400_000;
/** Certificates read per step of the not_after range, and written per transaction. */
export const EXPIRY_BATCH = 500;
const NOTICES = 'trigger_expiry_notices';

interface Candidate {
  id: string;
  notAfter: number;
}

/** One certificate's thresholds still to handle: the smallest is raised, the others recorded as passed. */
interface Notice {
  certificate: Candidate;
  thresholds: number[];
}

/**
 * The expiry scan: for the enabled `expiring` triggers of each tenant, raises CERTIFICATE-EXPIRING
 * {thresholdDays, notAfter} once per certificate and threshold, for certificates not revoked, not
 * archived, not yet expired, whose notAfter is within the threshold and that the trigger's query admits.
 *
 * Each raise is a row of trigger_expiry_notices (unique per tenant, certificate, threshold) written in
 * the same transaction as its event, so two nodes scanning at once raise it once: the second insert
 * fails on the key and its transaction (event included) rolls back. A certificate first seen inside
 * several thresholds raises the smallest and records the larger ones as `passed`.
 *
 * Cost: one range read of the (tenant, not_after, id) index over the certificates expiring within the
 * largest threshold, in keyset batches; per batch one query per trigger with a query, one read of the
 * notices, and one transaction for what is new.
 */
export class ExpiryScan {
  constructor(
    private readonly knex: Knex,
    private readonly events: EventStore,
    private readonly triggers: TriggerRepository,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {}

  /** Scans every tenant that has expiring triggers; answers how many events were raised. */
  async scan(isStopping: () => boolean = () => false): Promise<number> {
    const triggers = await this.triggers.enabledFor(['expiring']);
    const byTenant = new Map<string, Trigger[]>();
    for (const t of triggers) byTenant.set(t.tenant, [...(byTenant.get(t.tenant) ?? []), t]);
    let raised = 0;
    for (const [tenant, list] of byTenant) {
      if (isStopping()) break;
      raised += await this.scanTenant(tenant, list, isStopping);
    }
    return raised;
  }

  private async scanTenant(tenant: string, triggers: readonly Trigger[], isStopping: () => boolean): Promise<number> {
    const now = this.clock();
    const largest = Math.max(...triggers.flatMap((t) => t.thresholds));
    const until = now + largest * DAY_MS;
    let after: Candidate | null = null;
    let raised = 0;
    while (!isStopping()) {
      const qb = this.knex('inv_certificates')
        .where({ tenant, revoked: false, archived: false })
        .andWhere('not_after', '>', now)
        .andWhere('not_after', '<=', until);
      if (after) {
        const from: Candidate = after;
        qb.andWhere((w) => void w.where('not_after', '>', from.notAfter).orWhere((same) => void same.where('not_after', from.notAfter).andWhere('id', '>', from.id)));
      }
      const rows = (await qb.orderBy([{ column: 'not_after' }, { column: 'id' }]).limit(EXPIRY_BATCH).select('id', 'not_after')) as { id: string; not_after: number | string }[];
      if (rows.length === 0) break;
      const batch = rows.map((r) => ({ id: r.id, notAfter: Number(r.not_after) }));
      after = batch[batch.length - 1]!;
      raised += await this.raise(tenant, await this.noticesOf(tenant, batch, triggers, now));
      if (rows.length < EXPIRY_BATCH) break;
    }
    return raised;
  }

  /** The thresholds each certificate of a batch has crossed and that are not handled yet. */
  private async noticesOf(tenant: string, batch: readonly Candidate[], triggers: readonly Trigger[], now: number): Promise<Notice[]> {
    const ids = batch.map((c) => c.id);
    const crossed = new Map<string, Set<number>>();
    for (const trigger of triggers) {
      let admitted: Set<string> | null = null;
      if (trigger.query !== null) {
        try {
          admitted = await certificatesMatching(this.knex, tenant, ids, trigger.query, now);
        } catch (err) {
          this.logger.warn({ trigger: trigger.name, err: (err as Error).message }, 'trigger query does not apply: the trigger matches nothing');
          continue;
        }
      }
      for (const c of batch) {
        if (admitted && !admitted.has(c.id)) continue;
        for (const days of trigger.thresholds) {
          if (c.notAfter - now > days * DAY_MS) continue;
          let set = crossed.get(c.id);
          if (!set) crossed.set(c.id, (set = new Set()));
          set.add(days);
        }
      }
    }
    if (crossed.size === 0) return [];
    const handled = (await this.knex(NOTICES).where({ tenant }).whereIn('certificate_id', [...crossed.keys()]).select('certificate_id', 'threshold_days')) as {
      certificate_id: string;
      threshold_days: number | string;
    }[];
    for (const h of handled) crossed.get(h.certificate_id)?.delete(Number(h.threshold_days));
    return batch
      .filter((c) => (crossed.get(c.id)?.size ?? 0) > 0)
      .map((c) => ({ certificate: c, thresholds: [...crossed.get(c.id)!].sort((a, b) => a - b) }));
  }

  /** Writes a batch's notices with their events in one transaction; on a conflict, each on its own. */
  private async raise(tenant: string, notices: readonly Notice[]): Promise<number> {
    if (notices.length === 0) return 0;
    try {
      await this.knex.transaction(async (trx) => {
        for (const notice of notices) await this.write(trx, tenant, notice);
      });
      return notices.length;
    } catch (err) {
      // Another node handled some of them (or the engine chose this transaction as a deadlock victim).
      this.logger.debug({ err: (err as Error).message }, 'expiry notices: batch conflicted, writing one by one');
    }
    let raised = 0;
    for (const notice of notices) {
      try {
        await this.knex.transaction((trx) => this.write(trx, tenant, notice));
        raised++;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    }
    return raised;
  }

  /** One certificate: the notice rows first (the unique key decides who raises), then the event. */
  private async write(trx: Knex.Transaction, tenant: string, notice: Notice): Promise<void> {
    const [smallest, ...passed] = notice.thresholds as [number, ...number[]];
    const now = this.clock();
    const { id, notAfter } = notice.certificate;
    await trx(NOTICES).insert([
      { tenant, certificate_id: id, threshold_days: smallest, state: 'raised', event_id: null, created_at: now },
      ...passed.map((days) => ({ tenant, certificate_id: id, threshold_days: days, state: 'passed', event_id: null, created_at: now })),
    ]);
    const event = await this.events.append(
      {
        tenant,
        code: LIFECYCLE_EVENT_CODES.expiring,
        module: 'triggers',
        status: 'warning',
        objectType: 'certificate',
        objectId: id,
        // The larger thresholds crossed at the same time: triggers that only name one of them fire on this event.
        payload: { thresholdDays: smallest, notAfter, ...(passed.length > 0 ? { passedThresholds: passed } : {}) },
      },
      { trx },
    );
    await trx(NOTICES).where({ tenant, certificate_id: id, threshold_days: smallest }).update({ event_id: event.id });
  }
}
