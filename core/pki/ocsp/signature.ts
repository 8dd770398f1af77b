import type * as pkijs from 'pkijs';
import { readTlv } from '../der/reader.js';
import { readSignatureAlgorithm, verifySignature } from '../x509/signature.js';
import { HASH_ALGORITHMS, readDer } from './asn1.js';

/** Bare key algorithms a CMS signer may name as its signature algorithm; the digest is then the SignerInfo's. */
const KEY_ONLY = new Set(['1.2.840.113549.1.1.1', '1.2.840.10045.2.1']);

/**
 * Checks a signature made with a pkijs AlgorithmIdentifier, through the X.509 decoder's verifier (cached
 * KeyObjects, RSA-PSS parameters). True or false when checked; null when the algorithm is not one node can
 * check here, so that nothing is claimed about it.
 */
export function checkSignature(algorithm: pkijs.AlgorithmIdentifier, spki: Uint8Array, data: Uint8Array, signature: Uint8Array, digestOid?: string): boolean | null {
  const der = new Uint8Array(algorithm.toSchema().toBER());
  const alg = readDer('signature algorithm', () => readSignatureAlgorithm(der, readTlv(der, 0)));
  if (alg.digest === undefined && KEY_ONLY.has(alg.oid) && digestOid) alg.digest = HASH_ALGORITHMS[digestOid];
  if (alg.digest === undefined) return null;
  return verifySignature(alg, spki, data, signature);
}
