import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

/** How long a Replay-Nonce may wait for the proof that carries it. */
export const POP_NONCE_LIFETIME_MS = 5 * 60_000;

/**
 * Replay-Nonce values of proofs of possession, in the database so that a nonce handed out by one node is
 * accepted by any node, and only once: the acceptance is the DELETE that finds the unexpired row.
 */
export class PopNonces {
  private issued = 0;

  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  async issue(tenant: string): Promise<string> {
    const nonce = randomBytes(18).toString('base64url');
    const now = this.clock();
    await this.knex('security_pop_nonces').insert({ nonce, tenant, expires_at: now + POP_NONCE_LIFETIME_MS });
    // Housekeeping now and then: nonces handed out and never used.
    if (++this.issued % 100 === 1) await this.knex('security_pop_nonces').where('expires_at', '<', now).delete();
    return nonce;
  }

  /** true once for a nonce this service issued to `tenant` and that has not expired; false afterwards. */
  async consume(tenant: string, nonce: string): Promise<boolean> {
    if (nonce.length === 0 || nonce.length > 64) return false;
    const deleted = await this.knex('security_pop_nonces').where({ nonce, tenant }).andWhere('expires_at', '>', this.clock()).delete();
    return deleted === 1;
  }
}
