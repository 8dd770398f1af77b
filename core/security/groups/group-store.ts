import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { ProblemError, type ErrorCode } from '../../errors/index.js';
import type { LocalizedText } from '../principals/resolver.js';
import { lockingRead, parseJson } from './input.js';
import * as memberships from './memberships.js';
import type { Db, GroupKind, Member, MemberChange } from './memberships.js';

/** What roles and teams have in common. */
export interface GroupInput {
  name: string;
  displayName: LocalizedText[];
  description: LocalizedText[];
}

export type Stored<T> = T & { id: string; createdAt: number; updatedAt: number };

export interface GroupRow {
  id: string;
  name: string;
  display_name: string;
  description: string;
  created_at: number | string;
  updated_at: number | string;
  [column: string]: unknown;
}

/**
 * Checks a membership change inside its transaction, before anything is written: gets the group and
 * the current manager flag of each identifier concerned that is a member. Throw to refuse.
 */
export type MemberGuard<T> = (group: Stored<T>, current: Map<string, boolean>) => void;

export interface GroupCodes {
  invalid: ErrorCode;
  notFound: ErrorCode;
  exists: ErrorCode;
}

/**
 * Roles and teams: one table each (name unique per tenant, localised texts as JSON) plus their rows in
 * security_memberships. Subclasses add their own columns. Deleting a group deletes its memberships in
 * the same transaction.
 */
export abstract class GroupStore<T extends GroupInput> {
  abstract readonly kind: GroupKind;
  abstract readonly codes: GroupCodes;
  protected abstract readonly table: string;
  /** The subclass's own columns, from an input (already validated). */
  protected abstract columns(input: T): Record<string, unknown>;
  /** The subclass's own fields, from a row. */
  protected abstract fields(row: GroupRow): Omit<T, keyof GroupInput>;

  /**
   * What a subclass keeps outside its table (a team's managers), written in the create's or update's
   * transaction after the row. None by default.
   */
  protected async writeRelated(_trx: Knex.Transaction, _tenant: string, _input: T): Promise<void> {}

  /** The same, read back onto groups as list, find, get, create and update answer them. None by default. */
  protected async withRelated(_db: Knex | Knex.Transaction, _tenant: string, groups: Stored<T>[]): Promise<Stored<T>[]> {
    return groups;
  }

  constructor(
    protected readonly knex: Knex,
    protected readonly clock: () => number,
  ) {}

  protected fromRow(row: GroupRow): Stored<T> {
    return {
      id: row.id,
      name: row.name,
      displayName: parseJson<LocalizedText[]>(row.display_name, []),
      description: parseJson<LocalizedText[]>(row.description, []),
      ...this.fields(row),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    } as Stored<T>;
  }

  private row(input: T): Record<string, unknown> {
    return {
      name: input.name,
      display_name: JSON.stringify(input.displayName),
      description: JSON.stringify(input.description),
      ...this.columns(input),
    };
  }

  protected notFound(name: string): ProblemError {
    return new ProblemError(this.codes.notFound, { message: `No ${this.kind} is named "${name}"` });
  }

  async list(tenant: string, db: Db = this.knex): Promise<Stored<T>[]> {
    const rows = (await db(this.table).where({ tenant }).orderBy('name')) as GroupRow[];
    return this.withRelated(db, tenant, rows.map((r) => this.fromRow(r)));
  }

  async find(db: Db, tenant: string, name: string): Promise<Stored<T> | null> {
    const row = (await db(this.table).where({ tenant, name }).first()) as GroupRow | undefined;
    return row ? (await this.withRelated(db, tenant, [this.fromRow(row)]))[0]! : null;
  }

  async get(tenant: string, name: string): Promise<Stored<T>> {
    const found = await this.find(this.knex, tenant, name);
    if (!found) throw this.notFound(name);
    return found;
  }

  /** The group, locked until the transaction ends (MySQL), or 404. */
  protected async lock(trx: Knex.Transaction, tenant: string, name: string): Promise<Stored<T>> {
    const row = (await lockingRead(trx, trx(this.table).where({ tenant, name }).first())) as GroupRow | undefined;
    if (!row) throw this.notFound(name);
    return this.fromRow(row);
  }

  /**
   * The standard set's writes (the configuration registry calls them through the store adapter of
   * group-config-store.ts, with its database handle or transaction): each in `db`'s transaction, or in one of
   * its own when `db` is not one, so a group's row and what it keeps outside (writeRelated) commit together.
   *
   * Creates the group; throws the database's unique violation when the name is taken.
   */
  async insert(db: Db, tenant: string, input: T): Promise<Stored<T>> {
    return inTransaction(db, async (trx) => {
      const now = this.clock();
      await trx(this.table).insert({ id: newId(now), tenant, ...this.row(input), created_at: now, updated_at: now });
      await this.writeRelated(trx, tenant, input);
      return (await this.find(trx, tenant, input.name))!;
    });
  }

  /** Replaces the group named in the input (PUT: the name identifies it; renaming a team is PATCH); null when there is none. */
  async replace(db: Db, tenant: string, input: T): Promise<Stored<T> | null> {
    return inTransaction(db, async (trx) => {
      const changed = await trx(this.table)
        .where({ tenant, name: input.name })
        .update({ ...this.row(input), updated_at: this.clock() });
      if (changed === 0) return null;
      await this.writeRelated(trx, tenant, input);
      return (await this.find(trx, tenant, input.name))!;
    });
  }

  /** Deletes the group and its memberships; false when there is none. */
  async delete(db: Db, tenant: string, name: string): Promise<boolean> {
    return inTransaction(db, async (trx) => {
      const row = await lockingRead(trx, trx(this.table).where({ tenant, name }).first('id'));
      if (!row) return false;
      await memberships.removeGroup(trx, tenant, this.kind, name);
      await trx(this.table).where({ tenant, name }).delete();
      return true;
    });
  }

  async members(tenant: string, name: string): Promise<Member[]> {
    await this.get(tenant, name);
    return memberships.listMembers(this.knex, tenant, this.kind, name);
  }

  async addMembers(tenant: string, name: string, changes: MemberChange[], guard?: MemberGuard<T>): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const group = await this.lock(trx, tenant, name);
      const ids = changes.map((c) => c.identifier);
      guard?.(group, await memberships.memberFlags(trx, tenant, this.kind, name, ids));
      await memberships.addMembers(trx, tenant, this.kind, name, changes);
    });
  }

  /** How many of the identifiers were members (now removed). */
  async removeMembers(tenant: string, name: string, identifiers: string[], guard?: MemberGuard<T>): Promise<number> {
    return this.knex.transaction(async (trx) => {
      const group = await this.lock(trx, tenant, name);
      guard?.(group, await memberships.memberFlags(trx, tenant, this.kind, name, identifiers));
      return memberships.removeMembers(trx, tenant, this.kind, name, identifiers);
    });
  }
}

/** `fn` in `db` when it is a transaction, else in a transaction of its own. */
function inTransaction<R>(db: Db, fn: (trx: Knex.Transaction) => Promise<R>): Promise<R> {
  return (db as Knex.Transaction).isTransaction ? fn(db as Knex.Transaction) : db.transaction(fn);
}
