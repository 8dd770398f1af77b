import { randomBytes } from 'node:crypto';
import type { PluginDatabase } from '@certwright/sdk';

const SWEEP_EVERY = 1000;

/**
 * Replay nonces (RFC 8555 §6.5) in the database with an expiry: any node accepts a nonce another issued,
 * and a nonce is accepted once (the DELETE that finds it is the acceptance).
 */
export class NonceStore {
  constructor(
    private readonly db: PluginDatabase,
    private readonly now: () => number,
    private readonly lifetimeMs: number,
  ) {}

  private issued = 0;

  async issue(): Promise<string> {
    const nonce = randomBytes(18).toString('base64url');
    await this.db('acme_nonces').insert({ nonce, expires_at: this.now() + this.lifetimeMs });
    // Unused nonces are dropped as they are made (one sweep per SWEEP_EVERY issued, on the expiry index), so the
    // table holds about a lifetime's worth without a job of its own.
    if (++this.issued % SWEEP_EVERY === 0) await this.sweep();
    return nonce;
  }

  /** Whether the nonce was issued, unused and unexpired; it is spent either way. */
  async consume(nonce: unknown): Promise<boolean> {
    if (typeof nonce !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(nonce)) return false;
    const deleted = await this.db('acme_nonces').where('nonce', nonce).andWhere('expires_at', '>', this.now()).delete();
    return deleted === 1;
  }

  /** Drops expired nonces. */
  async sweep(): Promise<number> {
    return this.db('acme_nonces').where('expires_at', '<=', this.now()).delete();
  }
}
