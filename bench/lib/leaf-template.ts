import type { CertificateTemplate } from '../../core/pki/issue/template.js';

/** What the local CA writes in a leaf: the toolkit peer and the floor server of bench/enroll issue the same. */
export const LEAF_TEMPLATE: CertificateTemplate = {
  validityDays: 365,
  keyUsage: ['digitalSignature'],
  extendedKeyUsage: ['serverAuth', 'clientAuth'],
  crlDistributionPoints: ['http://127.0.0.1:9000/pki/local-ca/crl'],
  ocsp: ['http://127.0.0.1:9000/pki/local-ca/ocsp'],
  caIssuers: ['http://127.0.0.1:9000/pki/local-ca/ca'],
};
