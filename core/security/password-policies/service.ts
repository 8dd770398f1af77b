// PLACEHOLDER — being written (issue 4, helper A). Signatures fixed; bodies to come.
import type { Knex } from 'knex';
import { DEFAULT_POLICY, type PasswordPolicy } from './policy.js';

export class PasswordPolicyService {
  constructor(
    readonly knex: Knex,
    readonly clock: () => number,
  ) {}

  /** Creates the `Default` policy on a tenant that has none (first start). */
  async ensureDefault(_tenant: string): Promise<void> {}

  /** The policy local account secrets must satisfy (the tenant's `Default`). */
  async forLocalAccounts(_tenant: string): Promise<PasswordPolicy> {
    return DEFAULT_POLICY;
  }
}
