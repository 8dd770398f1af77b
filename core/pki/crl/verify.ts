import { constants, verify, type KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { readBitString, whole } from '../der/reader.js';
import { problemFor } from '../detect.js';
import { readSignatureAlgorithm } from '../x509/signature.js';
import { crlParts } from './decode.js';

/**
 * True when the CRL's signature verifies with the issuer's public key: a KeyObject, which the CRL
 * cache keeps per CA (x509/keys.ts publicKeyObject), so a refresh parses no SPKI. The tbsCertList bytes
 * are verified as they are (no re-encoding, no pkijs). A key of the wrong type or a malformed signature
 * is false; an unreadable CRL is PKI-001/002/005; an algorithm node cannot run is PKI-006.
 */
export function verifyCrl(der: Uint8Array, issuerKey: KeyObject): boolean {
  let parts: ReturnType<typeof crlParts>;
  let algorithm: ReturnType<typeof readSignatureAlgorithm>;
  let signature: Uint8Array;
  try {
    parts = crlParts(der);
    algorithm = readSignatureAlgorithm(der, parts.signatureAlgorithm);
    const bits = readBitString(der, parts.signature);
    if (bits.unused !== 0) return false;
    signature = bits.bytes;
  } catch (err) {
    throw problemFor(err, der, 'crl');
  }
  const digest = algorithm.digest;
  if (digest === undefined) throw new ProblemError('PKI-006', { detail: `signature algorithm ${algorithm.name} is not supported` });
  const tbs = whole(der, parts.tbs);
  try {
    if (algorithm.saltLength !== undefined) {
      return verify(digest, tbs, { key: issuerKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: algorithm.saltLength }, signature);
    }
    return verify(digest, tbs, issuerKey, signature);
  } catch {
    // A key of another type than the algorithm, a malformed ECDSA signature: it does not verify.
    return false;
  }
}
