/**
 * The HTTPS listener's certificate on the embedded default: issued by a PKI connector of the platform (the
 * local CA) for localhost, 127.0.0.1, ::1 and the configured names, kept in <dataDir>/tls (key mode 0600), and
 * issued again when it nears its end or the names change. Configured certificate and key files take its place.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { newId } from '../../db/ids.js';
import { buildCsr } from '../../pki/csr/build.js';
import { toPem } from '../../pki/input.js';
import { generateKey } from '../../pki/keys/generate.js';
import type { PkiGateway } from '../../pki/connectors/types.js';

export interface ServerCredentials {
  cert: string;
  key: string;
  /** When the certificate ends (epoch ms). */
  notAfter: number;
}

/** The names a self-issued server certificate covers: loopback, then the configured hosts, once each. */
export function serverNames(hosts: readonly string[]): string[] {
  return [...new Set(['localhost', '127.0.0.1', '::1', ...hosts.map((h) => h.toLowerCase())])].filter((h) => h !== '' && !h.includes('*'));
}

const sansOf = (pem: string): string[] =>
  (new X509Certificate(pem).subjectAltName ?? '')
    .split(', ')
    .map((s) => s.replace(/^(DNS|IP Address):/, '').toLowerCase())
    .map((s) => (s === '0:0:0:0:0:0:0:1' ? '::1' : s));

/** Reads configured files; no issuance. */
export function credentialsFromFiles(certFile: string, keyFile: string): ServerCredentials {
  const cert = readFileSync(certFile, 'utf8');
  const key = readFileSync(keyFile, 'utf8');
  createPrivateKey(key); // fails early, with the file's reason
  return { cert, key, notAfter: Date.parse(new X509Certificate(cert).validTo) };
}

/**
 * The stored certificate when it covers `names` and has more than `renewBeforeMs` left; otherwise a new one
 * from `connector` (90 days), written before it is answered.
 */
export async function ensureServerCertificate(o: {
  dir: string;
  names: string[];
  renewBeforeMs: number;
  now: number;
  gateway: PkiGateway;
  tenant: string;
  connector: string;
}): Promise<ServerCredentials & { issued: boolean }> {
  const certFile = join(o.dir, 'server.crt');
  const keyFile = join(o.dir, 'server.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    try {
      const current = credentialsFromFiles(certFile, keyFile);
      const covered = new Set(sansOf(current.cert.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0]));
      if (current.notAfter - o.now > o.renewBeforeMs && o.names.every((n) => covered.has(n))) return { ...current, issued: false };
    } catch {
      // unreadable or mismatched: issued again below
    }
  }
  const pair = generateKey('ec-secp256r1');
  const sans = o.names.map((n) => (isIP(n) ? { sanType: 'IPADDRESS' as const, value: n } : { sanType: 'DNSNAME' as const, value: n }));
  const csrPem = toPem(buildCsr(pair.privateKey, { subject: 'CN=localhost', sans }), 'CERTIFICATE REQUEST');
  const result = await o.gateway.issue(o.tenant, o.connector, {
    requestId: newId(o.now),
    csrPem,
    profile: 'certwright-https',
    subject: 'CN=localhost',
    sans: sans.map((s) => ({ type: s.sanType, value: s.value })),
    validityDays: 90,
    keyUsage: ['digitalSignature', 'keyEncipherment'],
    extendedKeyUsage: ['serverAuth'],
  });
  if (result.status !== 'issued') throw new Error(`the HTTPS certificate was not issued by ${o.connector}: ${result.status === 'rejected' ? result.reason : 'queued'}`);
  const cert = [result.certificatePem.trim(), ...result.chainPem.slice(0, -1).map((c) => c.trim())].join('\n') + '\n';
  const key = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(certFile, cert);
  return { cert, key, notAfter: Date.parse(new X509Certificate(result.certificatePem).validTo), issued: true };
}
