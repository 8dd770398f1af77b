import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { buildCsr } from '../../core/pki/csr/build.js';
import { toPem } from '../../core/pki/input.js';

/** A fresh P-256 key (or `key`) and the PEM CSR for CN=`cn` with DNS SANs, built in process by the PKI toolkit. */
export const csrFor = (cn: string, dns: string[] = [], key: KeyObject = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey): string =>
  toPem(buildCsr(key, { subject: `CN=${cn}`, sans: dns.map((value) => ({ sanType: 'DNSNAME' as const, value })) }), 'CERTIFICATE REQUEST');
