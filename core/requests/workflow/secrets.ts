import { createHash, generateKeyPair, randomBytes, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import type { SecretBox } from '../../secrets/index.js';
import type { KeyTypeName } from '../../profiles/types.js';

type Db = Knex | Knex.Transaction;

/** Kinds of sealed values a request may hold (migration 0016 `request_secrets`). */
export type SecretKind = 'key' | 'password' | 'pkcs12' | 'challenge' | 'import-key';

/**
 * Sealed values of requests and escrowed keys. Associated data binds each value to its row, so a sealed
 * value copied to another request or kind does not open.
 */
export class RequestSecrets {
  constructor(
    private readonly knex: Knex,
    private readonly box: SecretBox,
    private readonly clock: () => number,
  ) {}

  private aad = (id: string, kind: string): string => `request:${id}:${kind}`;

  async put(db: Db, tenant: string, requestId: string, kind: SecretKind, value: string): Promise<void> {
    await db('request_secrets').where({ tenant, request_id: requestId, kind }).delete();
    await db('request_secrets').insert({ tenant, request_id: requestId, kind, sealed: this.box.seal(value, this.aad(requestId, kind)), created_at: this.clock() });
  }

  async peek(db: Db, tenant: string, requestId: string, kind: SecretKind): Promise<string | null> {
    const row = (await db('request_secrets').where({ tenant, request_id: requestId, kind }).first('sealed')) as { sealed: string } | undefined;
    return row ? this.box.openString(row.sealed, this.aad(requestId, kind)) : null;
  }

  async drop(db: Db, tenant: string, requestId: string, kinds: readonly SecretKind[]): Promise<void> {
    await db('request_secrets').where({ tenant, request_id: requestId }).whereIn('kind', kinds).delete();
  }

  /** Reads the one-time values once: whoever deletes the row (one statement) is the one who gets it. */
  async take(tenant: string, requestId: string, kind: SecretKind): Promise<string | null> {
    const value = await this.peek(this.knex, tenant, requestId, kind);
    if (value === null) return null;
    const deleted = await this.knex('request_secrets').where({ tenant, request_id: requestId, kind }).delete();
    return deleted > 0 ? value : null;
  }

  async escrow(db: Db, tenant: string, certificateId: string, requestId: string, pkcs8Pem: string): Promise<void> {
    await db('request_escrow').where({ tenant, certificate_id: certificateId }).delete();
    await db('request_escrow').insert({ tenant, certificate_id: certificateId, request_id: requestId, sealed_key: this.box.seal(pkcs8Pem, `escrow:${certificateId}`), created_at: this.clock() });
  }

  async escrowed(tenant: string, certificateId: string): Promise<string | null> {
    const row = (await this.knex('request_escrow').where({ tenant, certificate_id: certificateId }).first('sealed_key')) as { sealed_key: string } | undefined;
    return row ? this.box.openString(row.sealed_key, `escrow:${certificateId}`) : null;
  }
}

const generate = promisify(generateKeyPair) as unknown as (type: string, options: Record<string, unknown>) => Promise<{ privateKey: KeyObject; publicKey: KeyObject }>;

const CURVES: Record<string, string> = { 'ec-secp256r1': 'prime256v1', 'ec-secp384r1': 'secp384r1', 'ec-secp521r1': 'secp521r1' };

/** A fresh key pair of a profile key type (centralized enrollment), generated off the event loop. */
export async function generateKey(keyType: KeyTypeName): Promise<KeyObject> {
  if (keyType.startsWith('rsa-')) return (await generate('rsa', { modulusLength: Number(keyType.slice(4)), publicExponent: 0x10001 })).privateKey;
  const curve = CURVES[keyType];
  if (curve) return (await generate('ec', { namedCurve: curve })).privateKey;
  if (keyType === 'ed-25519') return (await generate('ed25519', {})).privateKey;
  throw new Error(`unsupported key type ${keyType}`);
}

/** A challenge secret (144 bits, URL-safe) and the SHA-256 it is stored as. */
export function newChallenge(): { secret: string; hash: string } {
  const secret = randomBytes(18).toString('base64url');
  return { secret, hash: hashChallenge(secret) };
}

export const hashChallenge = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');
