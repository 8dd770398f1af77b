import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { children, DerError, expectTag, readOid, readTlv, readTop, TAG } from '../der/reader.js';
import { CURVES } from '../oids.js';
import { publicKeyThumbprint, readPublicKey } from '../x509/keys.js';

/** A private key found in a PKCS#12 file: described, never returned. */
export interface KeySummary {
  /** rsa-2048, ec-secp256r1, ed-25519, … named exactly as CertificateInfo.keyType. */
  keyType: string;
  /** SHA-256 of the public key's SubjectPublicKeyInfo DER, as CertificateInfo.publicKeyThumbprint. */
  publicKeyThumbprint?: string;
}

/**
 * keyType and public-key thumbprint of a PrivateKeyInfo (PKCS#8). node derives the public key; its
 * SPKI then goes through the certificate decoder's key reader so both name keys the same way. The
 * shape is checked with the DER reader first (a broken key is a broken file, PKI-001); a well-formed
 * key node cannot load (ML-DSA on node 20…) is still described by its algorithm, without thumbprint.
 */
export function describePrivateKey(pkcs8: Uint8Array): KeySummary {
  const top = readTop(pkcs8, TAG.SEQUENCE, 'PrivateKeyInfo');
  const [version, alg, key] = children(pkcs8, top);
  if (!version || !alg || !key) throw new DerError('PrivateKeyInfo is version, algorithm, key', top.start);
  expectTag(key, TAG.OCTET_STRING, 'private key');
  const [oid, params] = children(pkcs8, expectTag(alg, TAG.SEQUENCE, 'private key algorithm'));
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
  } catch {
    const curve = params?.tag === TAG.OID ? CURVES[readOid(pkcs8, params)] : undefined;
    return { keyType: curve ? `ec-${curve}` : readOid(pkcs8, oid ?? alg) };
  }
  const spki = new Uint8Array(createPublicKey(keyObject).export({ type: 'spki', format: 'der' }));
  return { keyType: readPublicKey(spki, readTlv(spki, 0)).keyType, publicKeyThumbprint: publicKeyThumbprint(spki) };
}
