import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { newId } from '../db/ids.js';
import { tenantKey, TrustedReads } from '../db/trusted-reads.js';
import { isUniqueViolation } from '../db/unique.js';
import { ProblemError } from '../errors/index.js';
import type { EventStore } from '../events/store.js';
import { rowOfStored, storedOfRow, viewOf, type ProfileRow, type StoredProfile } from './model.js';
import type { CertificateProfile } from './types.js';

const TABLE = 'certificate_profiles';

/**
 * How long a node trusts a profile it read for the request workflows before reading it again (ms): the
 * connectors' version check (core/pki/connectors/instances.ts) allows the same. A change made on this node
 * applies at once; one made on another node within this much.
 */
export const PROFILE_TRUST_MS = 1000;
export const profileNotFound = (name: string): ProblemError => new ProblemError('PRF-003', { detail: `No enabled certificate profile named "${name}"` });
const exists = (name: string): ProblemError => new ProblemError('PRF-004', { detail: `A certificate profile named "${name}" already exists` });

/**
 * Certificate profiles of each tenant (migration 0015). Every change is one transaction with its
 * PROFILE-CREATED / -UPDATED / -DELETED event.
 */
export class ProfileRepository {
  /** Profiles read by `findTrusted`. */
  private readonly trusted = new TrustedReads<StoredProfile>(PROFILE_TRUST_MS);

  constructor(
    private readonly knex: Knex,
    private readonly events: EventStore,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string, db: Knex | Knex.Transaction = this.knex): Promise<StoredProfile[]> {
    return ((await db(TABLE).where({ tenant }).orderBy('name')) as ProfileRow[]).map(storedOfRow);
  }

  async find(tenant: string, name: string, db: Knex | Knex.Transaction = this.knex): Promise<StoredProfile | null> {
    const row = (await db(TABLE).where({ tenant, name }).first()) as ProfileRow | undefined;
    return row ? storedOfRow(row) : null;
  }

  /**
   * `find` for the request workflows, which read the profile on every request: a profile read within
   * PROFILE_TRUST_MS answers without a read (every change through this repository forgets it first).
   */
  findTrusted(tenant: string, name: string): Promise<StoredProfile | null> {
    return this.trusted.read(tenantKey(tenant, name), () => this.find(tenant, name));
  }

  async get(tenant: string, name: string): Promise<StoredProfile> {
    const found = await this.find(tenant, name);
    if (!found) throw new ProblemError('PRF-003', { detail: `No certificate profile named "${name}"` });
    return found;
  }

  /**
   * Creates a profile; PRF-004 when the name is taken (also when another writer took it a moment before).
   * `db`: a transaction to write in (a configuration import's); the write is a savepoint inside it.
   */
  async create(tenant: string, profile: CertificateProfile, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<StoredProfile> {
    const now = this.clock();
    const stored: StoredProfile = { id: newId(now), tenant, profile: { ...profile, createdAt: now, updatedAt: now }, version: 1, createdBy: principal, updatedBy: principal };
    try {
      await db.transaction(async (trx) => {
        await trx(TABLE).insert(rowOfStored(stored));
        await this.record(trx, stored, 'PROFILE-CREATED', principal);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw exists(profile.name);
      throw err;
    }
    return stored;
  }

  /** Replaces the profile of that name (its id, creation date and creator stay; version + 1). */
  async update(tenant: string, profile: CertificateProfile, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<StoredProfile> {
    return this.trusted.changing(tenantKey(tenant, profile.name), () => db.transaction(async (trx) => {
      const current = await this.locked(trx, tenant, profile.name);
      const stored: StoredProfile = {
        ...current,
        profile: { ...profile, createdAt: current.profile.createdAt, updatedAt: this.clock() },
        version: current.version + 1,
        updatedBy: principal,
      };
      await trx(TABLE).where({ id: current.id }).update(rowOfStored(stored));
      await this.record(trx, stored, 'PROFILE-UPDATED', principal);
      return stored;
    }));
  }

  /** Deletes a profile. Requests and certificates that name it keep the name. */
  async remove(tenant: string, name: string, principal: string | null, db: Knex | Knex.Transaction = this.knex): Promise<void> {
    await this.trusted.changing(tenantKey(tenant, name), () => db.transaction(async (trx) => {
      const current = await this.locked(trx, tenant, name);
      await trx(TABLE).where({ id: current.id }).delete();
      await this.record(trx, current, 'PROFILE-DELETED', principal);
    }));
  }

  private async locked(trx: Knex.Transaction, tenant: string, name: string): Promise<StoredProfile> {
    const read = trx(TABLE).where({ tenant, name }).first();
    const row = (await (isMysql(trx) ? read.forUpdate() : read)) as ProfileRow | undefined;
    if (!row) throw new ProblemError('PRF-003', { detail: `No certificate profile named "${name}"` });
    return storedOfRow(row);
  }

  private async record(trx: Knex.Transaction, stored: StoredProfile, code: string, principal: string | null): Promise<void> {
    await this.events.append(
      { tenant: stored.tenant, code, module: 'profiles', status: 'success', principal, objectType: 'profile', objectId: stored.profile.name, payload: { profile: viewOf(stored) } },
      { trx },
    );
  }
}
