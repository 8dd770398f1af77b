import { certificateView, type CertificateView } from '../views/x509.js';
import type { ChainResult } from './model.js';

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

/** Each certificate of a tc answer is Horizon's CFCertificateResponse (views/x509.ts). */
export function orderedChain(chain: ChainResult, order: TcOrder): CertificateView[] {
  const leafToRoot = chain.path.map((l) => certificateView(l.certificate));
  const list = order.startsWith('i') ? leafToRoot.slice(1) : leafToRoot;
  return order.endsWith('rtl') ? list.reverse() : list;
}
