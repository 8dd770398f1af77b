/**
 * The certificate decoder of the hot paths (ingest, inventory, the rfc5280/x509 route): one walk of
 * the DER with the lean reader, digests from node:crypto, no pkijs object graph. Any bad input ends
 * in a ProblemError with a PKI code (kind.ts), never another exception.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { readTlv, readUnsignedHex, whole } from '../der/reader.js';
import { decodeInput, toPem } from '../input.js';
import { decodeName } from '../names.js';
import { readExtensions } from './extensions.js';
import { decodeFailure, kindOfLabel, wrongKind } from './kind.js';
import { publicKeyThumbprint, readPublicKey } from './keys.js';
import type { CertificateInfo } from './model.js';
import { readSignatureAlgorithm, verifySignature, type SignatureAlgorithm } from './signature.js';
import { readCertificate, type CertificateStructure } from './structure.js';

/**
 * Self-signature results by SHA-256 of the certificate: a root is re-ingested often (every chain that
 * ends in it) and its check costs a public-key signature verification.
 */
const selfSignedCache = new LRUCache<string, boolean>({ max: 4096 });

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

function isSelfSigned(s: CertificateStructure, algorithm: SignatureAlgorithm, sha256: string, spki: Uint8Array): boolean {
  const cached = selfSignedCache.get(sha256);
  if (cached !== undefined) return cached;
  const result = verifySignature(algorithm, spki, s.tbs, s.signature);
  selfSignedCache.set(sha256, result);
  return result;
}

function decode(der: Uint8Array): CertificateInfo {
  const s = readCertificate(der);
  const subject = decodeName(der, s.subject);
  const issuer = decodeName(der, s.issuer);
  const key = readPublicKey(der, s.spki);
  const { extensions, subjectAlternateNames } = s.extensions ? readExtensions(der, s.extensions) : { extensions: { all: [] }, subjectAlternateNames: [] };
  const sha1 = createHash('sha1').update(der).digest('hex');
  const sha256 = createHash('sha256').update(der).digest('hex');
  const algorithm = readSignatureAlgorithm(der, s.signatureAlgorithm);
  const sameName = equalBytes(subject.der, issuer.der) || subject.dn === issuer.dn;
  return {
    pem: toPem(der),
    version: s.version,
    dn: subject.dn,
    dnElements: subject.elements,
    issuer: issuer.dn,
    issuerElements: issuer.elements,
    serial: readUnsignedHex(der, s.serial),
    notBefore: s.notBefore,
    notAfter: s.notAfter,
    keyType: key.keyType,
    signingAlgorithm: algorithm.name,
    subjectAlternateNames,
    extensions,
    thumbprint: sha1,
    thumbprints: { sha1, sha256 },
    publicKeyThumbprint: publicKeyThumbprint(key.spki),
    selfSigned: sameName && isSelfSigned(s, algorithm, sha256, key.spki),
  };
}

/** Decodes one DER certificate. Throws ProblemError PKI-001/002/004/005. */
export function parseCertificate(der: Uint8Array): CertificateInfo {
  try {
    return decode(der);
  } catch (err) {
    throw decodeFailure(err, der, 'certificate');
  }
}

/**
 * Decodes a certificate sent as PEM (possibly percent-encoded), bare base64 or DER bytes. A PEM block
 * of another kind (a CRL, a CSR…) is refused as the wrong kind before any decoding.
 */
export function parseCertificatePem(input: string | Uint8Array): CertificateInfo {
  const decoded = decodeInput(input);
  let der = decoded.der;
  if (decoded.label !== undefined) {
    const kind = kindOfLabel(decoded.label);
    if (kind !== 'certificate' && kind !== 'unknown') throw wrongKind('certificate', kind);
    // OpenSSL's TRUSTED CERTIFICATE is the certificate followed by its trust settings.
    if (decoded.label === 'TRUSTED CERTIFICATE') {
      try {
        der = whole(der, readTlv(der, 0));
      } catch (err) {
        throw decodeFailure(err, der, 'certificate');
      }
    }
  }
  return parseCertificate(der);
}
