/**
 * Self-signed certificates: a new root CA (the default) or a self-signed leaf. Subject and issuer are
 * the same Name bytes, and AKI names the certificate's own key, as OpenSSL writes roots.
 */
import type { KeyObject } from 'node:crypto';
import { readTlv } from '../der/reader.js';
import { keyIdentifier, readPublicKey } from '../x509/keys.js';
import { buildCertificate } from './certificate.js';
import { encodeGeneralNames } from './names.js';
import { subjectOf } from './issuer.js';
import { signerFor } from './signer.js';
import type { CertificateTemplate } from './template.js';

export function selfSignedCertificate(
  privateKey: KeyObject,
  template: CertificateTemplate,
  options: { rsaHash?: 'sha256' | 'sha384' | 'sha512'; clock?: () => number } = {},
): Uint8Array {
  const signer = signerFor(privateKey, options.rsaHash);
  const subject = subjectOf(template);
  return buildCertificate({
    signer,
    issuer: subject,
    authorityKeyId: keyIdentifier(readPublicKey(signer.spki, readTlv(signer.spki, 0))),
    subject,
    spki: signer.spki,
    ...(template.sans?.length ? { sans: encodeGeneralNames(template.sans) } : {}),
    template: { basicConstraints: { ca: true }, ...template },
    now: (options.clock ?? Date.now)(),
  });
}
