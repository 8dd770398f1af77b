/**
 * ctx.pki (SDK PkiToolkitFacade): the PKI toolkit handed to plugins. Keys, self-signed and CA-signed
 * certificates go through core/pki/issue (lean DER writer, KeyObjects built once per signer); CRLs through
 * core/pki/crl/build, OCSP responses through core/pki/ocsp/respond. Toolkit problems become PermanentError,
 * the SDK's "never succeeds as asked".
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { PermanentError, type CaSigner, type IssuedCertificate, type IssueTemplate, type PkiToolkitFacade } from '@certwright/sdk';
import { ProblemError } from '../errors/index.js';
import { buildCrl } from '../pki/crl/build.js';
import { readTlv, readUnsignedHex } from '../pki/der/reader.js';
import { decodeInput, toPem } from '../pki/input.js';
import { CertificateIssuer } from '../pki/issue/issuer.js';
import { selfSignedCertificate } from '../pki/issue/self-signed.js';
import type { CertificateTemplate } from '../pki/issue/template.js';
import { caIdentity } from '../pki/keys/ca-identity.js';
import { generateKeyPem } from '../pki/keys/generate.js';
import { OcspResponder } from '../pki/ocsp/respond.js';
import type { KeyUsage } from '../pki/x509/extensions.js';
import type { SubjectAlternateName } from '../pki/x509/model.js';

/** A toolkit problem as the SDK's PermanentError (its detail as the message, the problem as the cause). */
function permanent(err: unknown): never {
  if (err instanceof ProblemError) {
    throw new PermanentError(err.detail ? `${err.message}: ${err.detail}` : err.message, { cause: err });
  }
  if (err instanceof PermanentError) throw err;
  if (err instanceof Error) throw new PermanentError(err.message, { cause: err });
  throw new PermanentError(String(err));
}

function guarded<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch (err) {
      return permanent(err);
    }
  };
}

/** The SDK's template as the issuer's: SAN types upper-cased (DNSNAME, IPADDRESS, …). */
export function certificateTemplate(t: IssueTemplate): CertificateTemplate {
  const out: CertificateTemplate = {};
  if (t.subject !== undefined) out.subject = t.subject;
  if (t.sans !== undefined) out.sans = t.sans.map((s) => ({ sanType: s.sanType.toUpperCase() as SubjectAlternateName['sanType'], value: s.value }));
  if (t.notBefore !== undefined) out.notBefore = t.notBefore;
  if (t.notAfter !== undefined) out.notAfter = t.notAfter;
  if (t.validityDays !== undefined) out.validityDays = t.validityDays;
  // Names are checked where the extension is written (HTTP-003 for an unknown usage).
  if (t.keyUsage !== undefined) out.keyUsage = t.keyUsage as KeyUsage[];
  if (t.extendedKeyUsage !== undefined) out.extendedKeyUsage = t.extendedKeyUsage;
  if (t.basicConstraints !== undefined) out.basicConstraints = t.basicConstraints;
  if (t.crlDistributionPoints !== undefined) out.crlDistributionPoints = t.crlDistributionPoints;
  if (t.ocsp !== undefined) out.ocsp = t.ocsp;
  if (t.caIssuers !== undefined) out.caIssuers = t.caIssuers;
  if (t.policies !== undefined) out.policies = t.policies;
  return out;
}

function privateKeyOf(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    throw new PermanentError('the private key is not a PEM key node can read');
  }
}

const derOf = (input: string | Uint8Array): Uint8Array => decodeInput(input).der;

function issued(der: Uint8Array): IssuedCertificate {
  // The serial is the second field of the TBSCertificate: [0] version, serialNumber.
  const tbs = readTlv(der, readTlv(der, 0).valueStart);
  const version = readTlv(der, tbs.valueStart);
  return { certificatePem: toPem(der), serial: readUnsignedHex(der, readTlv(der, version.end)) };
}

/** A CA signer: issuer, CRL signer and OCSP responder over one KeyObject, prepared once. */
function caSigner(caCertificatePem: string, caPrivateKeyPem: string, clock: () => number): CaSigner {
  const key = privateKeyOf(caPrivateKeyPem);
  const caDer = derOf(caCertificatePem);
  const issuer = new CertificateIssuer({ caCertificateDer: caDer, caKey: key, clock });
  const ca = caIdentity(caDer, key);
  const responder = new OcspResponder(ca, clock);
  return {
    certificatePem: toPem(caDer),
    issue: guarded((csr, template = {}) => issued(issuer.issue(derOf(csr), certificateTemplate(template)))),
    issueForPublicKey: guarded((publicKeyPem, template) => {
      let spki: Uint8Array;
      try {
        spki = new Uint8Array(createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }));
      } catch {
        throw new PermanentError('the public key is not a PEM key node can read');
      }
      return issued(issuer.issueForKey(spki, certificateTemplate(template)));
    }),
    crl: guarded((input) => buildCrl(ca, input)),
    async ocsp(requestDer, lookup, options = {}) {
      try {
        return await responder.respond(requestDer, lookup, options);
      } catch (err) {
        return permanent(err);
      }
    },
  };
}

export function pkiToolkitFacade(clock: () => number): PkiToolkitFacade {
  return {
    generateKey: guarded((type) => generateKeyPem(type)),
    selfSigned: guarded((privateKeyPem, template) => issued(selfSignedCertificate(privateKeyOf(privateKeyPem), certificateTemplate(template), { clock }))),
    signer: guarded((caCertificatePem, caPrivateKeyPem) => caSigner(caCertificatePem, caPrivateKeyPem, clock)),
  };
}
