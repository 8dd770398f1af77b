import type { Knex } from 'knex';
import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { DEFAULT_POLICY, generatePassword, policyProblem, type PasswordPolicy } from './policy.js';
import { PasswordPolicyRepository, type StoredPasswordPolicy } from './repository.js';

/** A password policy as the API shows it (client-compat §2.3 fields plus `_id`). */
export interface PasswordPolicyView extends PasswordPolicy {
  _id: string;
}

/** What a client sends: the name, and the rules it sets (the others keep their default or current value). */
export type PasswordPolicyInput = Pick<PasswordPolicy, 'name'> & Partial<Omit<PasswordPolicy, 'name'>>;

export const DEFAULT_POLICY_NAME = DEFAULT_POLICY.name;

/** The name Ansible asks a password of before every enroll (client-compat §10): an alias of Default. */
export const HORIZON_DEFAULT_NAME = 'Horizon-Default';

const view = (s: StoredPasswordPolicy): PasswordPolicyView => ({ _id: s.id, ...s.policy });

/** Printable ASCII without space: generatePassword picks UTF-16 units, so anything wider would split. */
const SPECIALS = /^[!-~]*$/;

/**
 * Password policies (/api/v1/security/passwordpolicies/). Every tenant has `Default`, the policy local
 * account passwords must satisfy; it can be changed but not removed.
 */
export class PasswordPolicyService {
  private readonly repo: PasswordPolicyRepository;

  constructor(
    readonly knex: Knex,
    readonly clock: () => number,
  ) {
    this.repo = new PasswordPolicyRepository(knex, clock);
  }

  /** Creates the `Default` policy on a tenant that has none (first start). */
  async ensureDefault(tenant: string): Promise<void> {
    if (await this.repo.find(tenant, DEFAULT_POLICY_NAME)) return;
    try {
      await this.repo.insert(tenant, DEFAULT_POLICY);
    } catch (err) {
      // Another node created it first.
      if (!isUniqueViolation(err)) throw err;
    }
  }

  /** The policy local account secrets must satisfy: the tenant's `Default` (created if missing). */
  async forLocalAccounts(tenant: string): Promise<PasswordPolicy> {
    return (await this.storedDefault(tenant)).policy;
  }

  /** The same, as the API shows it (for a UI showing the rules of local account passwords). */
  async forLocalAccountsView(tenant: string): Promise<PasswordPolicyView> {
    return view(await this.storedDefault(tenant));
  }

  async list(tenant: string): Promise<PasswordPolicyView[]> {
    return (await this.repo.list(tenant)).map(view);
  }

  async get(tenant: string, name: string): Promise<PasswordPolicyView> {
    return view(await this.require(tenant, name));
  }

  /** By name, with `Horizon-Default` falling back to `Default` when no policy has that name. */
  async resolve(tenant: string, name: string): Promise<PasswordPolicyView> {
    if (name === HORIZON_DEFAULT_NAME) {
      const own = await this.repo.find(tenant, name);
      return view(own ?? (await this.storedDefault(tenant)));
    }
    return this.get(tenant, name);
  }

  /** A fresh password satisfying the named policy (see `resolve` for the name). */
  async generate(tenant: string, name: string): Promise<string> {
    return generatePassword(await this.resolve(tenant, name));
  }

  /** Default is seeded at bootstrap and cannot be removed; re-seeded here should a tenant lack it anyway. */
  private async storedDefault(tenant: string): Promise<StoredPasswordPolicy> {
    const found = await this.repo.find(tenant, DEFAULT_POLICY_NAME);
    if (found) return found;
    await this.ensureDefault(tenant);
    return this.require(tenant, DEFAULT_POLICY_NAME);
  }

  private async require(tenant: string, name: string): Promise<StoredPasswordPolicy> {
    const found = await this.repo.find(tenant, name);
    if (!found) throw notFound(name);
    return found;
  }
}

const notFound = (name: string): ProblemError => new ProblemError('SEC-PWD-003', { message: `No password policy is named "${name}"` });
