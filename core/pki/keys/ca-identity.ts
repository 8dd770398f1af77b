/**
 * What a CA signs CRLs and OCSP responses with, prepared once per CA: its signer (cached KeyObject), its
 * subject Name bytes (the issuer of what it signs), its key identifier (AKI of CRLs, as CertificateIssuer
 * writes it in certificates) and its public key bytes (OCSP issuerKeyHash, responder id byKey).
 */
import type { KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { whole } from '../der/reader.js';
import { signerFor, type Signer } from '../issue/signer.js';
import { readExtensions } from '../x509/extensions.js';
import { decodeFailure } from '../x509/kind.js';
import { keyIdentifier, readPublicKey } from '../x509/keys.js';
import { readCertificate } from '../x509/structure.js';

export interface CaIdentity {
  certificateDer: Uint8Array;
  signer: Signer;
  /** The CA's subject Name DER, byte for byte. */
  name: Uint8Array;
  /** The CA's SKI when it has one, else RFC 5280 method 1 (SHA-1 of its public key bytes). */
  keyId: Uint8Array;
  /** The subjectPublicKey BIT STRING's bytes. */
  publicKeyBytes: Uint8Array;
}

export function caIdentity(caCertificateDer: Uint8Array, caKey: KeyObject, rsaHash?: 'sha256' | 'sha384' | 'sha512'): CaIdentity {
  let ca;
  try {
    ca = readCertificate(caCertificateDer);
  } catch (err) {
    throw new ProblemError('CA-002', { detail: `the CA certificate is unreadable: ${decodeFailure(err, caCertificateDer, 'certificate').detail ?? ''}` });
  }
  const signer = signerFor(caKey, rsaHash);
  if (!Buffer.from(whole(caCertificateDer, ca.spki)).equals(signer.spki)) throw new ProblemError('CA-002', { detail: 'the private key does not belong to the CA certificate' });
  const key = readPublicKey(caCertificateDer, ca.spki);
  const ski = ca.extensions ? readExtensions(caCertificateDer, ca.extensions).extensions.subjectKeyIdentifier : undefined;
  return {
    certificateDer: caCertificateDer,
    signer,
    name: whole(caCertificateDer, ca.subject),
    keyId: ski ? Buffer.from(ski, 'hex') : keyIdentifier(key),
    publicKeyBytes: key.keyBytes,
  };
}
