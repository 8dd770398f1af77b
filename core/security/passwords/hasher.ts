import { hash, verify } from '@node-rs/argon2';

/** @node-rs/argon2's Algorithm.Argon2id (its enum is an ambient const enum, unusable under isolatedModules). */
const ARGON2ID = 2;

export interface Argon2Parameters {
  /** Memory per hash, KiB. */
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  /** Verifications running at once on this node; the rest queue (bounds memory under a login flood). */
  maxConcurrent: number;
}

/**
 * argon2id hashing of local account secrets (@node-rs/argon2: prebuilt binaries, runs off the event
 * loop). Verification compares in constant time inside argon2. A lookup of an unknown account still
 * spends one verification against a dummy hash, so timing does not tell which identifiers exist.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private dummy: Promise<string> | undefined;

  constructor(private readonly params: Argon2Parameters) {}

  hash(secret: string): Promise<string> {
    return this.limited(() =>
      hash(secret, {
        algorithm: ARGON2ID,
        memoryCost: this.params.memoryKiB,
        timeCost: this.params.iterations,
        parallelism: this.params.parallelism,
      }),
    );
  }

  /** True when `secret` matches `phc`; a missing or malformed hash verifies nothing (but costs the same). */
  async verify(phc: string | null | undefined, secret: string): Promise<boolean> {
    if (!phc || !phc.startsWith('$argon2')) {
      this.dummy ??= this.hash('certwright-dummy-secret');
      const dummy = await this.dummy;
      await this.limited(() => verify(dummy, secret).catch(() => false));
      return false;
    }
    return this.limited(() => verify(phc, secret).catch(() => false));
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.params.maxConcurrent) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}
