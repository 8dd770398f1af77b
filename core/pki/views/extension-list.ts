import type { DecodedExtensions } from '../x509/model.js';

/**
 * A certificate's extensions as Horizon's certificate object carries them (`extensions: [{key, value}]`
 * of text; the v2 Go client decodes an array, docs/CertificateExtension.md): one entry per extension
 * the toolkit decoded, named as RFC 5280 names it, its value as text; one per other extension, keyed
 * by OID with its extnValue octets in hex. Certwright's full decoding stays in `decodedExtensions`.
 */
export function extensionList(ext: DecodedExtensions): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  const add = (key: string, value: string | undefined) => {
    if (value !== undefined) out.push({ key, value });
  };
  add('keyUsage', ext.keyUsage?.usages.join(', '));
  add('extendedKeyUsage', ext.extendedKeyUsage?.usages.join(', '));
  if (ext.basicConstraints) add('basicConstraints', `CA:${ext.basicConstraints.ca ? 'TRUE' : 'FALSE'}${ext.basicConstraints.pathLength !== undefined ? `, pathlen:${ext.basicConstraints.pathLength}` : ''}`);
  add('subjectKeyIdentifier', ext.subjectKeyIdentifier);
  add('authorityKeyIdentifier', ext.authorityKeyIdentifier?.keyIdentifier);
  add('crlDistributionPoints', ext.crlDistributionPoints?.join(', '));
  if (ext.authorityInfoAccess) {
    const { ocsp, caIssuers } = ext.authorityInfoAccess;
    add('authorityInfoAccess', [...ocsp.map((u) => `OCSP - ${u}`), ...caIssuers.map((u) => `CA Issuers - ${u}`)].join(', '));
  }
  add('certificatePolicies', ext.certificatePolicies?.map((p) => p.oid).join(', '));
  if (ext.nameConstraints) add('nameConstraints', [...ext.nameConstraints.permitted.map((n) => `permitted ${n.sanType}:${n.value}`), ...ext.nameConstraints.excluded.map((n) => `excluded ${n.sanType}:${n.value}`)].join(', '));
  if (ext.sctCount !== undefined) add('signedCertificateTimestamps', String(ext.sctCount));
  for (const e of ext.all) if (e.hex !== undefined) add(e.oid, e.hex);
  return out;
}
