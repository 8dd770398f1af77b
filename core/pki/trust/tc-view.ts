import type { DnElement } from '../names.js';
import type { CertificateInfo, SubjectAlternateName } from '../x509/model.js';
import type { ChainResult } from './model.js';

/**
 * One certificate of a tc answer: Horizon's CFCertificateResponse, whose required fields the v2 Go client
 * checks when it decodes (dn, dnElements, issuerDn, keyType, signingAlgorithm, pem, thumbprints, key
 * usages, subjectKeyIdentifier, …); v1 Go and Ansible read pem, dn, issuerDn, serial, dates, selfSigned,
 * keyType, signingAlgorithm, sans and dnElements.
 */
export interface CfCertificate {
  pem: string;
  dn: string;
  dnElements: DnElement[];
  issuerDn: string;
  serial: string;
  notBefore: number;
  notAfter: number;
  selfSigned: boolean;
  keyType: string;
  signingAlgorithm: string;
  sans: SubjectAlternateName[];
  certificateThumbprint: string;
  certificateSHAOneThumbprint: string;
  publicKeyThumbprint: string;
  subjectKeyIdentifier: string;
  authorityKeyIdentifier?: string;
  keyUsages: string[];
  isKeyUsagesCritical: boolean;
  extendedKeyUsages: string[];
  isExtendedKeyUsagesCritical: boolean;
  crldps?: string[];
}

export function cfCertificate(c: CertificateInfo): CfCertificate {
  const ext = c.extensions;
  const out: CfCertificate = {
    pem: c.pem,
    dn: c.dn,
    dnElements: c.dnElements,
    issuerDn: c.issuer,
    serial: c.serial,
    notBefore: c.notBefore,
    notAfter: c.notAfter,
    selfSigned: c.selfSigned,
    keyType: c.keyType,
    signingAlgorithm: c.signingAlgorithm,
    sans: c.subjectAlternateNames,
    certificateThumbprint: c.thumbprints.sha256,
    certificateSHAOneThumbprint: c.thumbprints.sha1,
    publicKeyThumbprint: c.publicKeyThumbprint,
    subjectKeyIdentifier: ext.subjectKeyIdentifier ?? '',
    keyUsages: ext.keyUsage?.usages ?? [],
    isKeyUsagesCritical: ext.keyUsage?.critical ?? false,
    extendedKeyUsages: ext.extendedKeyUsage?.usages ?? [],
    isExtendedKeyUsagesCritical: ext.extendedKeyUsage?.critical ?? false,
  };
  if (ext.authorityKeyIdentifier?.keyIdentifier) out.authorityKeyIdentifier = ext.authorityKeyIdentifier.keyIdentifier;
  if (ext.crlDistributionPoints?.length) out.crldps = ext.crlDistributionPoints;
  return out;
}

/**
 * The tc orders (Horizon's TrustChainOrder): `ltr` leaf → root, `rtl` root → leaf, and the "issuing"
 * variants `iltr` / `irtl`, the same without the leaf (the CA certificates that issued it).
 */
export const TC_ORDERS = ['ltr', 'rtl', 'iltr', 'irtl'] as const;
export type TcOrder = (typeof TC_ORDERS)[number];

/**
 * With no order, leaf → root: what the Ansible collection stores as the chain after each enrollment (it
 * never sends one), what Horizon's MCP client documents as the default, and the order the cert-manager
 * issuer expects (it moves a final self-signed entry to ca.crt).
 */
export const DEFAULT_TC_ORDER: TcOrder = 'ltr';

export function orderedChain(chain: ChainResult, order: TcOrder): CfCertificate[] {
  const leafToRoot = chain.path.map((l) => cfCertificate(l.certificate));
  const list = order.startsWith('i') ? leafToRoot.slice(1) : leafToRoot;
  return order.endsWith('rtl') ? list.reverse() : list;
}
