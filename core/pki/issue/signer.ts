/**
 * Signing with a CA's private key: the AlgorithmIdentifier to write and the signature over TBS bytes.
 * Built once per key (the key stays a KeyObject: handing node a PEM per signature is ~19× slower).
 */
import { createPublicKey, sign, type KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { nul, oid, seq } from '../der/writer.js';

export interface Signer {
  /** DER AlgorithmIdentifier of the signatures this signer makes. */
  algorithm: Uint8Array;
  /** OpenSSL's name of the algorithm. */
  algorithmName: string;
  /** The SubjectPublicKeyInfo DER of the key. */
  spki: Uint8Array;
  sign(tbs: Uint8Array): Uint8Array;
}

const EC_HASHES: Record<string, { hash: string; oid: string; name: string }> = {
  prime256v1: { hash: 'sha256', oid: '1.2.840.10045.4.3.2', name: 'ecdsa-with-SHA256' },
  secp384r1: { hash: 'sha384', oid: '1.2.840.10045.4.3.3', name: 'ecdsa-with-SHA384' },
  secp521r1: { hash: 'sha512', oid: '1.2.840.10045.4.3.4', name: 'ecdsa-with-SHA512' },
};

const RSA_HASHES: Record<string, { oid: string; name: string }> = {
  sha256: { oid: '1.2.840.113549.1.1.11', name: 'sha256WithRSAEncryption' },
  sha384: { oid: '1.2.840.113549.1.1.12', name: 'sha384WithRSAEncryption' },
  sha512: { oid: '1.2.840.113549.1.1.13', name: 'sha512WithRSAEncryption' },
};

/**
 * A signer for a private KeyObject: RSA PKCS#1 v1.5 (SHA-256 unless `rsaHash` says otherwise), ECDSA
 * with the digest matching the curve (P-256/SHA-256, P-384/SHA-384, P-521/SHA-512), Ed25519, Ed448.
 * Other keys: PKI-006 "Unknown algorithm".
 */
export function signerFor(key: KeyObject, rsaHash: 'sha256' | 'sha384' | 'sha512' = 'sha256'): Signer {
  if (key.type !== 'private') throw new ProblemError('PKI-006', { detail: 'signing needs a private key' });
  const spki = new Uint8Array(createPublicKey(key).export({ type: 'spki', format: 'der' }));
  const type = key.asymmetricKeyType;
  if (type === 'rsa') {
    const { oid: o, name } = RSA_HASHES[rsaHash]!;
    // RFC 4055 §5: the parameters of the PKCS#1 v1.5 algorithms are NULL.
    return { algorithm: seq(oid(o), nul()), algorithmName: name, spki, sign: (tbs) => sign(rsaHash, tbs, key) };
  }
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
    const ec = EC_HASHES[curve];
    if (!ec) throw new ProblemError('PKI-006', { detail: `no signature algorithm for curve ${curve}` });
    // RFC 5758 §3.2: ECDSA algorithm identifiers have no parameters; node writes DER (r, s) signatures.
    return { algorithm: seq(oid(ec.oid)), algorithmName: ec.name, spki, sign: (tbs) => sign(ec.hash, tbs, key) };
  }
  if (type === 'ed25519' || type === 'ed448') {
    const o = type === 'ed25519' ? '1.3.101.112' : '1.3.101.113';
    return { algorithm: seq(oid(o)), algorithmName: type.toUpperCase(), spki, sign: (tbs) => sign(null, tbs, key) };
  }
  throw new ProblemError('PKI-006', { detail: `no signature algorithm for ${type ?? 'this'} keys` });
}
