import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { newId } from '../db/ids.js';
import { isUniqueViolation } from '../db/unique.js';
import { ProblemError } from '../errors/index.js';
import type { EventStore, StoredEvent } from '../events/store.js';
import type { SecretBox } from '../secrets/index.js';
import { rowOfTrigger, triggerOfRow, viewOf, type Trigger, type TriggerRow } from './model.js';
import type { CheckedTrigger } from './validate.js';

const TABLE = 'triggers';
const notFound = (name: string): ProblemError => new ProblemError('TRG-003', { detail: `No trigger named "${name}"` });
/** Where a sealed secret belongs: a ciphertext copied to another trigger or field does not open. */
const aad = (tenant: string, name: string, field: string): string => `triggers.target:${tenant}:${name}:${field}`;

/**
 * The triggers of each tenant (migration 0012). Secret target fields are sealed with the master key
 * and never leave this class in clear except through `fullTarget` (for the channel). Every change is
 * one transaction with its TRIGGER-CREATED / -UPDATED / -DELETED event.
 */
export class TriggerRepository {
  constructor(
    private readonly knex: Knex,
    private readonly secrets: SecretBox,
    private readonly events: EventStore,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string, db: Knex | Knex.Transaction = this.knex): Promise<Trigger[]> {
    return ((await db(TABLE).where({ tenant }).orderBy('name')) as TriggerRow[]).map(triggerOfRow);
  }

  async find(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<Trigger | null> {
    const row = (await db(TABLE).where({ tenant, name }).first()) as TriggerRow | undefined;
    return row ? triggerOfRow(row) : null;
  }

  async get(tenant: string, name: string): Promise<Trigger> {
    const found = await this.find(tenant, name);
    if (!found) throw notFound(name);
    return found;
  }

  async byId(id: string): Promise<Trigger | null> {
    const row = (await this.knex(TABLE).where({ id }).first()) as TriggerRow | undefined;
    return row ? triggerOfRow(row) : null;
  }

  /** Enabled triggers of every tenant that handle one of `events` (the dispatcher and the expiry scan). */
  async enabledFor(events: readonly string[], db: Knex | Knex.Transaction = this.knex): Promise<Trigger[]> {
    const rows = ((await db(TABLE).where({ enabled: true }).orderBy(['tenant', 'name'])) as TriggerRow[]).map(triggerOfRow);
    return rows.filter((t) => t.events.some((e) => events.includes(e)));
  }

  /** Opens one sealed secret field of a stored trigger. */
  openSecret(trigger: Trigger, field: string): unknown {
    const sealed = trigger.sealedSecrets[field];
    return sealed === undefined ? undefined : JSON.parse(this.secrets.openString(sealed, aad(trigger.tenant, trigger.name, field)));
  }

  /** The target as the channel gets it: the stored fields and the opened secrets. */
  fullTarget(trigger: Trigger): Record<string, unknown> {
    const out: Record<string, unknown> = { ...trigger.target };
    for (const field of Object.keys(trigger.sealedSecrets)) out[field] = this.openSecret(trigger, field);
    return out;
  }

  /** `db`: a transaction to write in (a configuration import's); the write is a savepoint inside it. */
  async create(tenant: string, checked: CheckedTrigger, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<Trigger> {
    const now = this.clock();
    const trigger = this.stored(tenant, checked, { id: newId(now), createdSeq: 0, createdAt: now, updatedAt: now });
    try {
      await db.transaction(async (trx) => {
        await trx(TABLE).insert(rowOfTrigger(trigger));
        const created = await this.record(trx, trigger, 'TRIGGER-CREATED', principal);
        trigger.createdSeq = created.seq;
        await trx(TABLE).where({ id: trigger.id }).update({ created_seq: created.seq });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ProblemError('TRG-004', { detail: `A trigger named "${checked.name}" already exists` });
      throw err;
    }
    return trigger;
  }

  /** Replaces the trigger of that name (its id and creation date stay). */
  async update(tenant: string, checked: CheckedTrigger, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<Trigger> {
    return db.transaction(async (trx) => {
      const current = await this.locked(trx, tenant, checked.name);
      const trigger = this.stored(tenant, checked, { id: current.id, createdSeq: current.createdSeq, createdAt: current.createdAt, updatedAt: this.clock() });
      await trx(TABLE).where({ id: current.id }).update(rowOfTrigger(trigger));
      await this.record(trx, trigger, 'TRIGGER-UPDATED', principal);
      return trigger;
    });
  }

  /** Enables or disables several triggers at once: all of them, or none when one name is unknown. */
  async setEnabled(tenant: string, names: readonly string[], enabled: boolean, principal: string | null): Promise<Trigger[]> {
    return this.knex.transaction(async (trx) => {
      const out: Trigger[] = [];
      for (const name of [...new Set(names)]) {
        const current = await this.locked(trx, tenant, name);
        if (current.enabled === enabled) {
          out.push(current);
          continue;
        }
        const trigger = { ...current, enabled, updatedAt: this.clock() };
        await trx(TABLE).where({ id: current.id }).update({ enabled, updated_at: trigger.updatedAt });
        await this.record(trx, trigger, 'TRIGGER-UPDATED', principal);
        out.push(trigger);
      }
      return out;
    });
  }

  /** Deletes a trigger; its pending deliveries are canceled when the worker reaches them. */
  async remove(tenant: string, name: string, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<void> {
    await db.transaction(async (trx) => {
      const current = await this.locked(trx, tenant, name);
      await trx(TABLE).where({ id: current.id }).delete();
      await this.record(trx, current, 'TRIGGER-DELETED', principal);
    });
  }

  private async locked(trx: Knex.Transaction, tenant: string, name: string): Promise<Trigger> {
    const read = trx(TABLE).where({ tenant, name }).first();
    const row = (await (isMysql(trx) ? read.forUpdate() : read)) as TriggerRow | undefined;
    if (!row) throw notFound(name);
    return triggerOfRow(row);
  }

  private stored(tenant: string, checked: CheckedTrigger, at: { id: string; createdSeq: number; createdAt: number; updatedAt: number }): Trigger {
    const target: Record<string, unknown> = {};
    const sealedSecrets: Record<string, string> = {};
    for (const [field, value] of Object.entries(checked.target)) {
      if (checked.secretFields.includes(field)) sealedSecrets[field] = this.secrets.seal(JSON.stringify(value), aad(tenant, checked.name, field));
      else target[field] = value;
    }
    return {
      id: at.id,
      tenant,
      name: checked.name,
      description: checked.description,
      enabled: checked.enabled,
      channel: checked.channel,
      target,
      sealedSecrets,
      events: checked.events,
      thresholds: checked.thresholds,
      query: checked.query,
      triggerType: checked.triggerType,
      retries: checked.retries,
      horizon: checked.horizon,
      createdSeq: at.createdSeq,
      createdAt: at.createdAt,
      updatedAt: at.updatedAt,
    };
  }

  private async record(trx: Knex.Transaction, trigger: Trigger, code: string, principal: string | null): Promise<StoredEvent> {
    return this.events.append(
      { tenant: trigger.tenant, code, module: 'triggers', status: 'success', principal, objectType: 'trigger', objectId: trigger.name, payload: { trigger: viewOf(trigger) } },
      { trx },
    );
  }
}
