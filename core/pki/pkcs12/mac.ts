import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { children, DerError, expectTag, readOid, readSmallInt, TAG, value, type Tlv } from '../der/reader.js';
import { DIGEST_SIZES, KDF_ID, pkcs12Kdf } from './kdf.js';
import type { WorkBudget } from './budget.js';
import { DIGEST_ALGORITHMS } from '../oids.js';

/** The digests the PKCS#12 KDF is defined for (those with block sizes in kdf.ts). */
const DIGESTS: Record<string, string> = Object.fromEntries(Object.entries(DIGEST_ALGORITHMS).filter(([, name]) => name in DIGEST_SIZES));

export interface MacData {
  /** Digest name as `openssl pkcs12 -info` prints it (sha1, sha256…). */
  algorithm: string;
  iterations: number;
  salt: Uint8Array;
  digest: Uint8Array;
}

/** MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }. */
export function readMacData(buf: Uint8Array, tlv: Tlv): MacData {
  const [digestInfo, salt, iterations] = children(buf, expectTag(tlv, TAG.SEQUENCE, 'macData'));
  if (!digestInfo || !salt) throw new DerError('macData needs a DigestInfo and a salt', tlv.start);
  const [alg, digest] = children(buf, expectTag(digestInfo, TAG.SEQUENCE, 'DigestInfo'));
  const [oid] = children(buf, expectTag(alg ?? digestInfo, TAG.SEQUENCE, 'digest algorithm'));
  const dotted = readOid(buf, oid ?? digestInfo);
  const algorithm = DIGESTS[dotted];
  if (!algorithm) throw new ProblemError('PKI-006', { detail: `MAC algorithm ${dotted} is not supported` });
  const count = iterations ? readSmallInt(buf, expectTag(iterations, TAG.INTEGER, 'MAC iterations')) : 1;
  if (count < 1) throw new DerError('MAC iteration count below 1', tlv.start);
  return {
    algorithm,
    iterations: count,
    salt: value(buf, expectTag(salt, TAG.OCTET_STRING, 'MAC salt')),
    digest: value(buf, expectTag(digest ?? digestInfo, TAG.OCTET_STRING, 'MAC digest')),
  };
}

/** HMAC of the authSafe content under the key the PKCS#12 KDF derives from `bmpPassword` (RFC 7292 §5). */
export function macMatches(mac: MacData, content: Uint8Array, bmpPassword: Uint8Array, budget: WorkBudget): boolean {
  budget.kdfRounds(mac.iterations);
  const key = pkcs12Kdf(mac.algorithm, bmpPassword, mac.salt, KDF_ID.mac, mac.iterations, DIGEST_SIZES[mac.algorithm]!.u);
  const computed = createHmac(mac.algorithm, key).update(content).digest();
  return computed.length === mac.digest.length && timingSafeEqual(computed, mac.digest);
}
