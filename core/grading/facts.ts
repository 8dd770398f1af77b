import type { CertificateInfo, SubjectAlternateName } from '../pki/x509/model.js';
import { ALT_PUBLIC_KEY_EXTENSION, altKeyType } from './pqc.js';

/**
 * What the rules read of a certificate: the decoder's CertificateInfo (core/pki/x509/parse.ts) reduced to the
 * fields grading looks at, so rules stay pure functions of these facts.
 */
export interface CertificateFacts {
  /** rsa-2048, ec-secp256r1, ed-25519, ml-dsa-65, or the key algorithm's OID. */
  keyType: string;
  signingAlgorithm: string;
  notBefore: number;
  notAfter: number;
  sans: readonly SubjectAlternateName[];
  /** basicConstraints cA: a CA certificate (rules about TLS leaves do not apply to it). */
  ca: boolean;
  /** extendedKeyUsage names (serverAuth, clientAuth, …, or OIDs); null when the extension is absent. */
  eku: readonly string[] | null;
  /** The key type of a hybrid certificate's alternative public key (subjectAltPublicKeyInfo), or null. */
  altKeyType: string | null;
  dn: string;
}

export function factsOf(info: CertificateInfo): CertificateFacts {
  const alt = info.extensions.all.find((e) => e.oid === ALT_PUBLIC_KEY_EXTENSION);
  return {
    keyType: info.keyType,
    signingAlgorithm: info.signingAlgorithm,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    sans: info.subjectAlternateNames,
    ca: info.extensions.basicConstraints?.ca ?? false,
    eku: info.extensions.extendedKeyUsage?.usages ?? null,
    altKeyType: altKeyType(alt?.hex),
    dn: info.dn,
  };
}
