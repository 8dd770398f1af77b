import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';

/** A local account as the API shows it: never its secret nor its hash. */
export interface LocalIdentity {
  id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  enabled: boolean;
  hasSecret: boolean;
  secretChangedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface LocalIdentityInput {
  identifier: string;
  name: string | null;
  email: string | null;
  enabled: boolean;
}

interface Row {
  id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  secret_hash: string | null;
  secret_changed_at: number | string | null;
  enabled: number | boolean;
  created_at: number | string;
  updated_at: number | string;
}

const TABLE = 'security_local_identities';
const VISIBLE = ['id', 'identifier', 'name', 'email', 'secret_changed_at', 'enabled', 'created_at', 'updated_at'];

const fromRow = (r: Row): LocalIdentity => ({
  id: r.id,
  identifier: r.identifier,
  name: r.name,
  email: r.email,
  enabled: Boolean(r.enabled),
  hasSecret: r.secret_changed_at !== null,
  secretChangedAt: r.secret_changed_at === null ? null : Number(r.secret_changed_at),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** Rows of security_local_identities, always within one tenant. The hash leaves only through `credentialOf`. */
export class LocalIdentityRepository {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string): Promise<LocalIdentity[]> {
    return ((await this.knex(TABLE).select(VISIBLE).where({ tenant }).orderBy('identifier')) as Row[]).map(fromRow);
  }

  async find(tenant: string, identifier: string): Promise<LocalIdentity | undefined> {
    const row = (await this.knex(TABLE).select(VISIBLE).where({ tenant, identifier }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  async count(tenant: string): Promise<number> {
    const row = (await this.knex(TABLE).where({ tenant }).count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  }

  /** For verification only: the argon2id hash and whether the account may log in. */
  async credentialOf(tenant: string, identifier: string): Promise<{ hash: string | null; enabled: boolean; identity: LocalIdentity } | undefined> {
    const row = (await this.knex(TABLE).where({ tenant, identifier }).first()) as Row | undefined;
    return row ? { hash: row.secret_hash, enabled: Boolean(row.enabled), identity: fromRow(row) } : undefined;
  }

  /** Throws a unique violation when the identifier exists (callers map it to a 400). */
  async insert(tenant: string, input: LocalIdentityInput, secretHash: string | null): Promise<LocalIdentity> {
    const now = this.clock();
    await this.knex(TABLE).insert({
      id: newId(now),
      tenant,
      ...input,
      secret_hash: secretHash,
      secret_changed_at: secretHash === null ? null : now,
      created_at: now,
      updated_at: now,
    });
    return (await this.find(tenant, input.identifier))!;
  }

  async update(tenant: string, identifier: string, changes: Partial<Omit<LocalIdentityInput, 'identifier'>>): Promise<LocalIdentity | undefined> {
    await this.knex(TABLE).where({ tenant, identifier }).update({ ...changes, updated_at: this.clock() });
    return this.find(tenant, identifier);
  }

  async setSecretHash(tenant: string, identifier: string, secretHash: string): Promise<boolean> {
    const now = this.clock();
    const n = await this.knex(TABLE).where({ tenant, identifier }).update({ secret_hash: secretHash, secret_changed_at: now, updated_at: now });
    return n > 0;
  }

  async remove(tenant: string, identifier: string): Promise<boolean> {
    return (await this.knex(TABLE).where({ tenant, identifier }).delete()) > 0;
  }
}
