import { decodeJwt, decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { parseCertificatePem } from '../../pki/x509/parse.js';
import type { CertificateInfo } from '../../pki/x509/model.js';

/** Why a proof was refused: for the technical log; the client only learns that a proof is required. */
export class ProofRefused extends Error {}

/** Algorithms a holder key may sign with, by key (client-compat §1: RS256, ES256/384/512, EdDSA). */
function algorithmsFor(keyType: string): string[] {
  if (keyType.startsWith('rsa')) return ['RS256', 'RS384', 'RS512', 'PS256'];
  if (keyType === 'ec-secp256r1') return ['ES256'];
  if (keyType === 'ec-secp384r1') return ['ES384'];
  if (keyType === 'ec-secp521r1') return ['ES512'];
  if (keyType === 'ed-25519') return ['EdDSA'];
  return [];
}

/** Proofs are short-lived (clients sign exp = iat + 5 s): older than this, even with a valid exp, is refused. */
const MAX_PROOF_AGE_S = 300;
const MAX_PROOF = 32 * 1024;

/**
 * X-JWT-CERT-POP: a JWT whose `sub` is the holder's certificate (PEM) and which that certificate's key signed.
 * Answers the certificate and the proof's nonce (absent: the client must first fetch one). The certificate is
 * not trusted for anything here but its key: the workflow then acts only on that very certificate, as it
 * stands in the inventory.
 */
export async function verifyProof(jwt: string, now: number): Promise<{ certificate: CertificateInfo; nonce: string | null }> {
  if (jwt.length > MAX_PROOF) throw new ProofRefused('proof longer than 32 KiB');
  let sub: unknown;
  let alg: string | undefined;
  try {
    sub = decodeJwt(jwt).sub;
    alg = decodeProtectedHeader(jwt).alg;
  } catch {
    throw new ProofRefused('not a JWT');
  }
  if (typeof sub !== 'string' || !sub.includes('BEGIN CERTIFICATE')) throw new ProofRefused('sub is not a certificate PEM');
  let certificate: CertificateInfo;
  try {
    certificate = parseCertificatePem(sub);
  } catch {
    throw new ProofRefused('sub is not a readable certificate');
  }
  const allowed = algorithmsFor(certificate.keyType);
  if (!alg || !allowed.includes(alg)) throw new ProofRefused(`algorithm ${alg ?? 'none'} does not fit a ${certificate.keyType} key`);
  try {
    const key = await importX509(certificate.pem, alg);
    const { payload } = await jwtVerify(jwt, key, {
      algorithms: [alg],
      currentDate: new Date(now),
      clockTolerance: 30,
      maxTokenAge: MAX_PROOF_AGE_S,
      requiredClaims: ['iat'],
    });
    const nonce = typeof payload.nonce === 'string' && payload.nonce.length > 0 ? payload.nonce : null;
    return { certificate, nonce };
  } catch (err) {
    throw new ProofRefused(`signature or claims refused: ${(err as Error).message}`);
  }
}
