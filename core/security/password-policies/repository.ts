import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import type { PasswordPolicy } from './policy.js';

/** A stored password policy: the policy fields plus the row's id and stamps. */
export interface StoredPasswordPolicy {
  id: string;
  policy: PasswordPolicy;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  name: string;
  policy: string;
  created_at: number | string;
  updated_at: number | string;
}

const TABLE = 'security_password_policies';

/** The rule fields go to the JSON `policy` column; the name is its own (unique, exact) column. */
const rules = (p: PasswordPolicy): string =>
  JSON.stringify({
    minChar: p.minChar,
    maxChar: p.maxChar,
    minLoChar: p.minLoChar,
    minUpChar: p.minUpChar,
    minDiChar: p.minDiChar,
    minSpChar: p.minSpChar,
    spChar: p.spChar,
  });

const fromRow = (r: Row): StoredPasswordPolicy => ({
  id: r.id,
  policy: { ...(JSON.parse(r.policy) as Omit<PasswordPolicy, 'name'>), name: r.name },
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** Rows of security_password_policies, always within one tenant. */
export class PasswordPolicyRepository {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async list(tenant: string): Promise<StoredPasswordPolicy[]> {
    return ((await this.knex(TABLE).where({ tenant }).orderBy('name')) as Row[]).map(fromRow);
  }

  async find(tenant: string, name: string): Promise<StoredPasswordPolicy | undefined> {
    const row = (await this.knex(TABLE).where({ tenant, name }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Throws a unique violation when the name exists (callers map it). */
  async insert(tenant: string, policy: PasswordPolicy): Promise<StoredPasswordPolicy> {
    const now = this.clock();
    await this.knex(TABLE).insert({ id: newId(now), tenant, name: policy.name, policy: rules(policy), created_at: now, updated_at: now });
    return (await this.find(tenant, policy.name))!;
  }

  /** The updated policy, or undefined when none has that name (read back: MySQL counts changed rows, not matched). */
  async update(tenant: string, policy: PasswordPolicy): Promise<StoredPasswordPolicy | undefined> {
    await this.knex(TABLE).where({ tenant, name: policy.name }).update({ policy: rules(policy), updated_at: this.clock() });
    return this.find(tenant, policy.name);
  }

  async remove(tenant: string, name: string): Promise<boolean> {
    return (await this.knex(TABLE).where({ tenant, name }).delete()) > 0;
  }
}
