/**
 * Issues certificates for a CA: CSR (or bare public key) + template → signed DER. Everything about the
 * CA (its name bytes, key identifier, signer) is prepared once in the constructor, so an issuance costs
 * a CSR walk, its signature check, a TBSCertificate build and one signature.
 */
import type { KeyObject } from 'node:crypto';
import { ProblemError } from '../../errors/index.js';
import { readTlv, whole } from '../der/reader.js';
import { EXTENSIONS } from '../oids.js';
import { readCsr, requestedExtension, type CsrStructure } from '../csr/structure.js';
import { readGeneralNamesDer } from '../x509/general-names.js';
import { decodeFailure } from '../x509/kind.js';
import { keyIdentifier, readPublicKey } from '../x509/keys.js';
import { readSignatureAlgorithm, verifySignature } from '../x509/signature.js';
import { readCertificate } from '../x509/structure.js';
import { readExtensions } from '../x509/extensions.js';
import { buildCertificate } from './certificate.js';
import { encodeDn, encodeGeneralNames, encodeName } from './names.js';
import { signerFor, type Signer } from './signer.js';
import type { CertificateTemplate } from './template.js';

export interface IssuerOptions {
  /** The CA certificate (DER). */
  caCertificateDer: Uint8Array;
  /** The CA's private key, as a KeyObject built once (never a PEM per call). */
  caKey: KeyObject;
  /** Digest of RSA signatures (default sha256). */
  rsaHash?: 'sha256' | 'sha384' | 'sha512';
  clock?: () => number;
}

function caProblem(detail: string): ProblemError {
  return new ProblemError('CA-002', { detail });
}

export class CertificateIssuer {
  private readonly signer: Signer;
  private readonly issuerName: Uint8Array;
  private readonly authorityKeyId: Uint8Array;
  private readonly clock: () => number;

  constructor(options: IssuerOptions) {
    const der = options.caCertificateDer;
    let ca;
    try {
      ca = readCertificate(der);
    } catch (err) {
      throw caProblem(`the CA certificate is unreadable: ${decodeFailure(err, der, 'certificate').detail ?? ''}`);
    }
    this.signer = signerFor(options.caKey, options.rsaHash);
    const caSpki = whole(der, ca.spki);
    if (!Buffer.from(caSpki).equals(this.signer.spki)) throw caProblem('the private key does not belong to the CA certificate');
    this.issuerName = whole(der, ca.subject);
    // AKI = the CA's own SKI when it has one (chain builders match on it), else RFC 5280 method 1.
    const ski = ca.extensions ? readExtensions(der, ca.extensions).extensions.subjectKeyIdentifier : undefined;
    this.authorityKeyId = ski ? Buffer.from(ski, 'hex') : keyIdentifier(readPublicKey(der, ca.spki));
    this.clock = options.clock ?? Date.now;
  }

  /** OpenSSL's name of the signature algorithm this CA signs with. */
  get signatureAlgorithm(): string {
    return this.signer.algorithmName;
  }

  /**
   * Issues a certificate for the key of a CSR (DER). The CSR must be signed by its own key unless the
   * template says otherwise (PKI-007); subject and SANs default to what it requests.
   */
  issue(csrDer: Uint8Array, template: CertificateTemplate = {}): Uint8Array {
    let csr: CsrStructure;
    let requestedSans: Uint8Array | undefined;
    try {
      csr = readCsr(csrDer);
      requestedSans = template.sans === undefined ? requestedExtension(csr, EXTENSIONS.subjectAltName) : undefined;
      // Copied byte for byte, but only once known to be well-formed GeneralNames.
      if (requestedSans) readGeneralNamesDer(requestedSans);
    } catch (err) {
      throw decodeFailure(err, csrDer, 'CSR');
    }
    const spki = whole(csrDer, csr.spki);
    if (template.verifyCsrSignature !== false) {
      let algorithm;
      try {
        algorithm = readSignatureAlgorithm(csrDer, csr.signatureAlgorithm);
      } catch (err) {
        throw decodeFailure(err, csrDer, 'CSR');
      }
      if (algorithm.digest === undefined) throw new ProblemError('PKI-006', { detail: `the CSR is signed with ${algorithm.name}, which cannot be checked here` });
      if (!verifySignature(algorithm, spki, csr.info, csr.signature)) throw new ProblemError('PKI-007', { detail: 'the CSR is not signed by the key it carries' });
    }
    const subject = template.subject === undefined ? whole(csrDer, csr.subject) : undefined;
    return this.build(spki, template, subject, requestedSans);
  }

  /** Issues a certificate for a public key (SPKI DER) the server holds (centralized enrollment). */
  issueForKey(spkiDer: Uint8Array, template: CertificateTemplate): Uint8Array {
    try {
      readPublicKey(spkiDer, readTlv(spkiDer, 0));
    } catch (err) {
      throw decodeFailure(err, spkiDer, 'public key');
    }
    return this.build(spkiDer, template, undefined, undefined);
  }

  private build(spki: Uint8Array, template: CertificateTemplate, subjectDer: Uint8Array | undefined, sansDer: Uint8Array | undefined): Uint8Array {
    const subject = subjectDer ?? subjectOf(template);
    const sans = sansDer ?? (template.sans?.length ? encodeGeneralNames(template.sans) : undefined);
    return buildCertificate({
      signer: this.signer,
      issuer: this.issuerName,
      authorityKeyId: this.authorityKeyId,
      subject,
      spki,
      ...(sans ? { sans } : {}),
      template,
      now: this.clock(),
    });
  }
}

export const subjectOf = (template: CertificateTemplate): Uint8Array =>
  typeof template.subject === 'string' ? encodeDn(template.subject) : encodeName(template.subject ?? []);
