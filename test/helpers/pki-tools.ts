import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, type TestContext } from './kernel.js';
import { LEAF_EXT, OpensslPki, type Made } from './openssl-pki.js';

/**
 * Real objects made by the tools themselves (openssl ocsp / ts, ssh-keygen) in a temp dir, and readers
 * of their text output, so decoder tests compare against what the tools print rather than against
 * values typed by hand. TZ is UTC so that ssh-keygen -L prints times the tests can parse.
 */
export function tool(dir: string, command: string, args: string[], input?: string): string {
  return execFileSync(command, args, { cwd: dir, env: { ...process.env, TZ: 'UTC' }, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString('utf8');
}

export const openssl = (dir: string, ...args: string[]): string => tool(dir, 'openssl', args);

/** Everything a tool printed (stdout and stderr), whatever its exit status: for its verdicts ("Response verify OK"). */
export function verdict(dir: string, command: string, args: string[]): string {
  const run = spawnSync(command, args, { cwd: dir, env: { ...process.env, TZ: 'UTC' } });
  return `${run.stdout.toString('utf8')}${run.stderr.toString('utf8')}`;
}

/** "Nov 21 23:04:53 2026 GMT" or "Nov 21 23:05:00.76 2026 GMT" (openssl's dates) → epoch ms. */
export function opensslTime(text: string): number {
  const m = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d)(\.\d+)? (\d{4}) GMT$/.exec(text.trim());
  if (!m) throw new Error(`not an openssl date: ${text}`);
  const month = 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(m[1]!) / 3;
  const ms = m[6] ? Math.round(Number(`0${m[6]}`) * 1000) : 0;
  return Date.UTC(Number(m[7]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), ms);
}

/** openssl's one-line DN ("C = FR, O = Test, CN = CA") as RFC 4514 ("CN=CA,O=Test,C=FR"). */
export const onelineToRfc4514 = (text: string): string =>
  text
    .trim()
    .split(', ')
    .map((part) => part.replace(' = ', '='))
    .reverse()
    .join(',');

/** openssl's "/C=FR/O=Test/CN=TSA" (ts -text's DirName) as RFC 4514. */
export const slashedToRfc4514 = (text: string): string => text.trim().split('/').filter(Boolean).reverse().join(',');

/** The value after `label:` on each line where it appears (trimmed), in order. */
export const fieldsOf = (text: string, label: string): string[] =>
  [...text.matchAll(new RegExp(`^\\s*${label.replace(/[()]/g, '\\$&')}:[ \\t]*(.*)$`, 'gm'))].map((m) => m[1]!.trim());

export interface SmallCa {
  dir: string;
  pki: OpensslPki;
  /** The CA (EC P-256, its `openssl ca` index in ca-db/index.txt), a good and a revoked certificate. */
  ca: Made;
  good: Made;
  revoked: Made;
  /** A delegated OCSP responder with an RSA key (OCSPSigning). */
  responder: Made;
}

/**
 * A small CA made with openssl ca: one good and one revoked (keyCompromise) certificate in its index,
 * and a delegated RSA responder, so openssl ocsp -index can answer for both.
 */
export function smallCa(t: TestContext): SmallCa {
  const dir = tempDir(t, 'cw-pki-');
  const pki = new OpensslPki(dir);
  const ca = pki.root('ca', '/C=FR/O=Certwright Test/CN=Test CA');
  const good = pki.issue('good', '/CN=good.example', ca, { ext: LEAF_EXT });
  const revoked = pki.issue('revoked', '/CN=revoked.example', ca, { ext: LEAF_EXT });
  pki.revoke(revoked, ca, 'keyCompromise');
  openssl(dir, 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'responder.key');
  const responder = pki.issue('responder', '/O=Certwright Test/CN=OCSP Responder', ca, { ext: ['extendedKeyUsage=OCSPSigning', 'subjectKeyIdentifier=hash'], keyPath: join(dir, 'responder.key') });
  return { dir, pki, ca, good, revoked, responder };
}

/** A certificate's serial as openssl x509 -serial prints it (whole bytes), lower case: the decoders' form. */
export const serialOf = (cert: Made): string => /serial=(\S+)/.exec(openssl('.', 'x509', '-in', cert.certPath, '-noout', '-serial'))![1]!.toLowerCase();

/** openssl ocsp in the CA's dir; returns the DER written to `out` (-reqout for *.req, else -respout). */
export function ocspTool(ca: SmallCa, out: string, ...args: string[]): Uint8Array {
  openssl(ca.dir, 'ocsp', ...args, out.endsWith('.req') ? '-reqout' : '-respout', out);
  return readFileSync(join(ca.dir, out));
}

/** A TSA certificate (RSA key, timeStamping EKU) from the small CA, and an openssl ts configuration (tsa.cnf) for it. */
export function tsa(ca: SmallCa, policy = '1.3.6.1.4.1.99999.1'): string {
  const dir = ca.dir;
  openssl(dir, 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'tsa.key');
  ca.pki.issue('tsa', '/C=FR/O=Certwright Test/CN=Test TSA', ca.ca, { ext: ['extendedKeyUsage=critical,timeStamping', 'subjectKeyIdentifier=hash'], keyPath: join(dir, 'tsa.key') });
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  writeFileSync(
    join(dir, 'tsa.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa_config1',
      '[ tsa_config1 ]',
      'serial = ./tsaserial',
      'crypto_device = builtin',
      'signer_cert = ./tsa.pem',
      'certs = ./ca.pem',
      'signer_key = ./tsa.key',
      'signer_digest = sha256',
      `default_policy = ${policy}`,
      'other_policies = 1.3.6.1.4.1.99999.2',
      'digests = sha1, sha256, sha384, sha512',
      'accuracy = secs:1, millisecs:500, microsecs:100',
      'clock_precision_digits = 3',
      'ordering = yes',
      'tsa_name = yes',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '',
    ].join('\n'),
  );
  return dir;
}
