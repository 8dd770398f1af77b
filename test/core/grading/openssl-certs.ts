import type { OpenSsl } from '../../helpers/openssl.js';

/**
 * Certificates made by the openssl CLI for the grading tests: a key of `keySpec` (rsa:1024, ec:P-256, ed25519…),
 * self-signed for `days` from now, a leaf (CA:FALSE) with the SAN and EKU given (none when null). A config of
 * its own, so OpenSSL's default v3_ca extensions stay out.
 */
export function opensslCertificate(ossl: OpenSsl, name: string, keySpec: string, options: { days?: number; san?: string | null; eku?: string | null } = {}): string {
  const { days = 90, san = `DNS:${name}.example`, eku = 'serverAuth' } = options;
  const key = ossl.key(`${name}.key`, keySpec);
  const ext = ['basicConstraints = critical, CA:FALSE', 'keyUsage = critical, digitalSignature', ...(san ? [`subjectAltName = ${san}`] : []), ...(eku ? [`extendedKeyUsage = ${eku}`] : [])];
  const config = ossl.write(`${name}.cnf`, ['[req]', 'distinguished_name = dn', 'x509_extensions = ext', 'prompt = no', '[dn]', `CN = ${name}.example`, '[ext]', ...ext, ''].join('\n'));
  const digest = keySpec.startsWith('ed') ? [] : ['-sha256'];
  ossl.run(['req', '-x509', '-new', '-key', key, '-config', config, '-days', String(days), ...digest, '-out', `${name}.pem`]);
  return ossl.read(`${name}.pem`).toString('utf8');
}
