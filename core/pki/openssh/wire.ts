import { ProblemError } from '../../errors/index.js';

/**
 * A reader of the SSH wire encoding (RFC 4251 §5): uint32, uint64, string (uint32 length + bytes) and
 * mpint. Every length is checked against what is left before anything is sliced, so a hostile length
 * (0xffffffff) fails at once with PKI-001 instead of allocating or reading past the end.
 */
export class SshReader {
  private pos = 0;

  constructor(
    private readonly buf: Uint8Array,
    /** What is being read, for error details ("certificate", "private key"). */
    private readonly what: string,
  ) {}

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  fail(reason: string): never {
    throw new ProblemError('PKI-001', { detail: `${this.what}: ${reason} (at byte ${this.pos})` });
  }

  private need(n: number): void {
    if (n > this.remaining) this.fail(`truncated: ${n} bytes announced, ${this.remaining} left`);
  }

  uint32(): number {
    this.need(4);
    const b = this.buf;
    const p = this.pos;
    this.pos += 4;
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
  }

  uint64(): bigint {
    const high = BigInt(this.uint32());
    return (high << 32n) | BigInt(this.uint32());
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A length-prefixed byte string. */
  string(): Uint8Array {
    return this.bytes(this.uint32());
  }

  /** A length-prefixed UTF-8 text (names, comments, principals). */
  text(): string {
    return Buffer.from(this.string()).toString('utf8');
  }

  /** An mpint as unsigned big-endian bytes without leading zeros; negative values are refused. */
  mpint(): Uint8Array {
    const raw = this.string();
    if (raw.length > 0 && raw[0]! & 0x80) this.fail('negative mpint');
    let start = 0;
    while (start < raw.length && raw[start] === 0) start++;
    return raw.subarray(start);
  }

  /** Throws unless everything was read. */
  end(): void {
    if (this.remaining !== 0) this.fail(`${this.remaining} unexpected trailing bytes`);
  }
}

/** Number of significant bits of an unsigned big-endian integer. */
export function bitLength(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  return (bytes.length - 1) * 8 + (32 - Math.clz32(bytes[0]!));
}

/** The strings packed one after another inside a string (principals, critical options, extensions). */
export function packedStrings(data: Uint8Array, what: string): Uint8Array[] {
  const reader = new SshReader(data, what);
  const out: Uint8Array[] = [];
  while (reader.remaining > 0) out.push(reader.string());
  return out;
}
