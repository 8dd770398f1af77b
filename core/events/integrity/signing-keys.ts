import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Knex } from 'knex';
import type { SecretBox } from '../../secrets/index.js';
import { keyFingerprint, publicKeyPem } from './signature.js';

export interface SigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

interface KeyRow {
  key_id: string;
  active: number | null;
  public_key: string;
  private_key_sealed: string;
  created_at: number | string;
}

/** The sealed column names its row, so a sealed key copied onto another row does not open. */
const aad = (keyId: string) => `event_signing_keys.private_key_sealed:${keyId}`;

/**
 * The Ed25519 keys that sign event checkpoints. The private key is created on first need, sealed with the
 * SecretBox and stored in the database, so every node signs with the same key; two nodes creating it at
 * once insert one row (unique `active`) and the loser re-reads the winner's.
 */
export class SigningKeys {
  private cached: SigningKey | undefined;

  constructor(
    private readonly knex: Knex,
    private readonly secrets: SecretBox,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The key that signs new checkpoints, created if there is none yet. */
  async current(): Promise<SigningKey> {
    if (this.cached) return this.cached;
    let row = await this.activeRow();
    if (!row) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const keyId = keyFingerprint(publicKey);
      await this.knex('event_signing_keys')
        .insert({
          key_id: keyId,
          active: 1,
          public_key: publicKeyPem(publicKey),
          private_key_sealed: this.secrets.seal(privateKey.export({ type: 'pkcs8', format: 'der' }), aad(keyId)),
          created_at: this.clock(),
        })
        .onConflict('active')
        .ignore();
      row = await this.activeRow();
      if (!row) throw new Error('event signing key: no active key after creating one');
    }
    this.cached = this.open(row);
    return this.cached;
  }

  /**
   * Every key that ever signed, by key id, with the public key derived from its sealed private key: a row
   * whose public key or id was replaced in the database (without the master key) does not match and is
   * left out, so checkpoints forged with a substitute key fail.
   */
  async trusted(): Promise<Map<string, KeyObject>> {
    const rows = (await this.knex('event_signing_keys').select()) as KeyRow[];
    const keys = new Map<string, KeyObject>();
    for (const row of rows) {
      try {
        const key = this.open(row);
        if (key.keyId === row.key_id && keyFingerprint(createPublicKey(row.public_key)) === row.key_id) keys.set(row.key_id, key.publicKey);
      } catch {
        // Unopenable or mismatched: not trusted; the checkpoints it signed fail verification.
      }
    }
    return keys;
  }

  /**
   * The public keys a verifier may pin (GET /api/v1/events/integrity/keys, `certwright events verify --key`):
   * every trusted key, the active one first. The active key is created if there is none yet, so it can be
   * pinned before the first checkpoint.
   */
  async published(): Promise<{ keyId: string; publicKey: string; active: boolean; createdAt: number }[]> {
    const active = await this.current();
    const trusted = await this.trusted();
    const rows = (await this.knex('event_signing_keys').select('key_id', 'created_at').orderBy('created_at')) as Pick<KeyRow, 'key_id' | 'created_at'>[];
    return rows
      .filter((r) => trusted.has(r.key_id))
      .map((r) => ({ keyId: r.key_id, publicKey: publicKeyPem(trusted.get(r.key_id)!), active: r.key_id === active.keyId, createdAt: Number(r.created_at) }))
      .sort((a, b) => Number(b.active) - Number(a.active));
  }

  private activeRow(): Promise<KeyRow | undefined> {
    return this.knex('event_signing_keys').where({ active: 1 }).first() as Promise<KeyRow | undefined>;
  }

  private open(row: KeyRow): SigningKey {
    const privateKey = createPrivateKey({ key: this.secrets.open(row.private_key_sealed, aad(row.key_id)), format: 'der', type: 'pkcs8' });
    const publicKey = createPublicKey(privateKey);
    return { keyId: keyFingerprint(publicKey), privateKey, publicKey };
  }
}
