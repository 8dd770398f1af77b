/**
 * A degenerate "certs-only" PKCS#7 SignedData (RFC 5652 §5, RFC 8894 §3.4, RFC 7030 §4.1.3): no signers, no
 * digest algorithms, id-data without content, the certificates in the given order. EST cacerts and
 * simpleenroll answers and SCEP GetCACert and CertRep carry certificates this way. Assembled from the DER as
 * given (each checked to be one well-formed TLV), without re-parsing the certificates.
 */
import { degenerateSignedData } from '../scep/degenerate.js';

/** The DER of a certs-only SignedData ContentInfo holding `certificatesDer` (each one DER certificate). */
export function degenerateCertsOnly(certificatesDer: readonly Uint8Array[]): Uint8Array {
  try {
    return degenerateSignedData(certificatesDer);
  } catch {
    throw new TypeError('A certificate does not parse as DER');
  }
}

/** PEM certificates (one or several per string) as DER, in order. */
export function pemCertificatesToDer(pems: readonly string[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const pem of pems) {
    for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)) {
      out.push(new Uint8Array(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')));
    }
  }
  return out;
}
