/**
 * The v3 extensions of an issued certificate, in the order CAs conventionally write them: basic
 * constraints, key usage, EKU, SKI, AKI, SAN, CDP, AIA, policies.
 */
import { ProblemError } from '../../errors/index.js';
import { bool, explicit, ia5String, implicit, namedBits, octets, oid, seq, smallInt } from '../der/writer.js';
import { EXTENDED_KEY_USAGES, EXTENSIONS, KEY_ALGORITHMS } from '../oids.js';
import { KEY_USAGES, type KeyUsage } from '../x509/extensions.js';
import type { PublicKeyInfo } from '../x509/keys.js';
import type { CertificateTemplate } from './template.js';

const EKU_OIDS = new Map(Object.entries(EXTENDED_KEY_USAGES).map(([o, name]) => [name.toLowerCase(), o]));
const invalid = (detail: string): ProblemError => new ProblemError('HTTP-003', { detail });

const extension = (id: string, critical: boolean, valueDer: Uint8Array): Uint8Array =>
  critical ? seq(oid(id), bool(true), octets(valueDer)) : seq(oid(id), octets(valueDer));

function defaultKeyUsage(ca: boolean, key: PublicKeyInfo): KeyUsage[] {
  if (ca) return ['digitalSignature', 'keyCertSign', 'cRLSign'];
  return key.algorithm === KEY_ALGORITHMS.rsa ? ['digitalSignature', 'keyEncipherment'] : ['digitalSignature'];
}

function ekuOid(usage: string): string {
  if (/^\d+(\.\d+)+$/.test(usage)) return usage;
  const found = EKU_OIDS.get(usage.toLowerCase());
  if (!found) throw invalid(`unknown extended key usage: ${usage}`);
  return found;
}

const uri = (u: string): Uint8Array => {
  try {
    return ia5String(u, 0x86);
  } catch {
    throw invalid(`a URI must be ASCII: ${JSON.stringify(u)}`);
  }
};

export interface ExtensionInputs {
  template: CertificateTemplate;
  subjectKey: PublicKeyInfo;
  subjectKeyId: Uint8Array;
  /** Absent for a self-signed certificate without one. */
  authorityKeyId?: Uint8Array;
  /** GeneralNames SEQUENCE DER, absent for none. */
  sans?: Uint8Array;
  /** RFC 5280 §4.2.1.6: SAN is critical when the subject is empty. */
  subjectEmpty: boolean;
}

/** The Extensions SEQUENCE. */
export function buildExtensions({ template: t, subjectKey, subjectKeyId, authorityKeyId, sans, subjectEmpty }: ExtensionInputs): Uint8Array {
  const bc = t.basicConstraints ?? { ca: false };
  const out: Uint8Array[] = [];
  if (bc.pathLength !== undefined && (!bc.ca || !Number.isInteger(bc.pathLength) || bc.pathLength < 0)) throw invalid('pathLength needs a CA and a non-negative integer');
  out.push(extension(EXTENSIONS.basicConstraints, true, seq(...(bc.ca ? [bool(true)] : []), ...(bc.pathLength !== undefined ? [smallInt(bc.pathLength)] : []))));
  const usages = t.keyUsage ?? defaultKeyUsage(bc.ca, subjectKey);
  if (usages.length > 0) {
    const bits = usages.map((u) => {
      const i = KEY_USAGES.indexOf(u);
      if (i < 0) throw invalid(`unknown key usage: ${u}`);
      return i;
    });
    out.push(extension(EXTENSIONS.keyUsage, true, namedBits(bits)));
  }
  if (t.extendedKeyUsage?.length) out.push(extension(EXTENSIONS.extKeyUsage, false, seq(...t.extendedKeyUsage.map((u) => oid(ekuOid(u))))));
  out.push(extension(EXTENSIONS.subjectKeyIdentifier, false, octets(subjectKeyId)));
  if (authorityKeyId) out.push(extension(EXTENSIONS.authorityKeyIdentifier, false, seq(implicit(0, authorityKeyId))));
  if (sans) out.push(extension(EXTENSIONS.subjectAltName, subjectEmpty, sans));
  if (t.crlDistributionPoints?.length) {
    // DistributionPoint { distributionPoint [0] { fullName [0] GeneralNames } }
    out.push(extension(EXTENSIONS.crlDistributionPoints, false, seq(...t.crlDistributionPoints.map((u) => seq(explicit(0, implicit(0, uri(u), true)))))));
  }
  const aia = [...(t.ocsp ?? []).map((u) => seq(oid('1.3.6.1.5.5.7.48.1'), uri(u))), ...(t.caIssuers ?? []).map((u) => seq(oid('1.3.6.1.5.5.7.48.2'), uri(u)))];
  if (aia.length) out.push(extension(EXTENSIONS.authorityInfoAccess, false, seq(...aia)));
  if (t.policies?.length) {
    out.push(
      extension(
        EXTENSIONS.certificatePolicies,
        false,
        seq(
          ...t.policies.map((p) => {
            if (!/^\d+(\.\d+)+$/.test(p)) throw invalid(`not a policy OID: ${p}`);
            return seq(oid(p));
          }),
        ),
      ),
    );
  }
  return seq(...out);
}
