import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, type TestContext } from './kernel.js';

/**
 * The openssl CLI (and ssh-keygen) in a temp dir, for the CRL / PKCS#12 / PKCS#7 / detect tests: a
 * small `openssl ca` with an index, so CRLs carry real entries with reasons, and readers of openssl's
 * text output so decoded fields are compared with what openssl itself prints.
 */
export class RareTools {
  constructor(readonly dir: string) {}

  /** `openssl <args>` (or another tool) in the dir; stdout as a Buffer, stderr in the error. */
  bytes(args: string[], options: { input?: string | Uint8Array; command?: string } = {}): Buffer {
    return execFileSync(options.command ?? 'openssl', args, { cwd: this.dir, input: options.input, env: { ...process.env, TZ: 'UTC' }, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
  }

  run(args: string[], input?: string | Uint8Array): string {
    return this.bytes(args, { input }).toString('utf8');
  }

  /** stdout and stderr together (`openssl pkcs12 -info` writes its report to stderr). */
  both(args: string[]): string {
    const result = spawnSync('openssl', args, { cwd: this.dir, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
    return `${result.stdout}${result.stderr}`;
  }

  sshKeygen(args: string[]): string {
    return this.bytes(args, { command: 'ssh-keygen' }).toString('utf8');
  }

  write(name: string, content: string | Uint8Array): string {
    writeFileSync(join(this.dir, name), content);
    return name;
  }

  read(name: string): Buffer {
    return readFileSync(join(this.dir, name));
  }

  text(name: string): string {
    return this.read(name).toString('utf8');
  }

  /**
   * An `openssl ca` set-up: an RSA CA (subject below), its index, serial and crlnumber files, and a
   * config whose CRLs carry a CRL number, an AKI and `crlExtensions` (extra lines of the crl_ext
   * section) — or, with `v1Crl`, no extensions at all (openssl then writes a version 1 CRL).
   */
  ca(options: { subject?: string; keySpec?: string[]; crlExtensions?: string[]; v1Crl?: boolean } = {}): void {
    mkdirSync(join(this.dir, 'newcerts'), { recursive: true });
    this.write('index.txt', '');
    this.write('serial', '1000\n');
    this.write('crlnumber', '01\n');
    this.write(
      'ca.cnf',
      [
        '[ ca ]',
        'default_ca = CA_default',
        '[ CA_default ]',
        `dir = ${this.dir}`,
        'database = $dir/index.txt',
        'new_certs_dir = $dir/newcerts',
        'certificate = $dir/ca.pem',
        'private_key = $dir/ca.key',
        'serial = $dir/serial',
        ...(options.v1Crl ? [] : ['crlnumber = $dir/crlnumber']),
        'default_md = sha256',
        'default_days = 30',
        'default_crl_days = 7',
        'policy = policy_any',
        'unique_subject = no',
        ...(options.v1Crl ? [] : ['crl_extensions = crl_ext']),
        '[ policy_any ]',
        'commonName = supplied',
        '[ leaf ]',
        'basicConstraints = CA:FALSE',
        '[ tsa ]',
        'basicConstraints = CA:FALSE',
        'extendedKeyUsage = critical,timeStamping',
        '[ crl_ext ]',
        'authorityKeyIdentifier = keyid:always',
        ...(options.crlExtensions ?? []),
        '[ ca_ext ]',
        'basicConstraints = critical,CA:TRUE',
        'keyUsage = critical,keyCertSign,cRLSign',
        'subjectKeyIdentifier = hash',
        '',
      ].join('\n'),
    );
    const subject = options.subject ?? '/C=FR/O=Certwright Test/CN=Rare Test CA';
    const names = ['-utf8', ...(subject.includes('+') ? ['-multivalue-rdn'] : [])];
    this.run(['req', '-x509', '-newkey', ...(options.keySpec ?? ['rsa:2048']), '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', subject, ...names, '-extensions', 'ca_ext', '-config', 'ca.cnf']);
  }

  /** A P-256 leaf issued by the CA through `openssl ca` (extensions `leaf` or `tsa`); returns its PEM file name. */
  issue(name: string, commonName = `${name}.example`, extensions: 'leaf' | 'tsa' = 'leaf'): string {
    this.run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${commonName}`]);
    this.run(['ca', '-batch', '-config', 'ca.cnf', '-notext', '-extensions', extensions, '-in', `${name}.csr`, '-out', `${name}.pem`]);
    return `${name}.pem`;
  }

  /** `openssl ca -revoke` with `-crl_reason <reason>`, or `-crl_compromise <time>` (key compromise + invalidity date). */
  revoke(certFile: string, how: { reason?: string; compromise?: string } = {}): void {
    const extra = how.compromise ? ['-crl_compromise', how.compromise] : how.reason ? ['-crl_reason', how.reason] : [];
    this.run(['ca', '-config', 'ca.cnf', '-revoke', certFile, ...extra]);
  }

  /** `openssl ca -gencrl`; returns the PEM file name. */
  gencrl(name = 'crl.pem', extra: string[] = []): string {
    this.run(['ca', '-gencrl', '-config', 'ca.cnf', '-out', name, ...extra]);
    return name;
  }

  /** DER of a PEM file, converted by openssl (`x509`, `crl`, `req`, `pkcs7`, `pkey`). */
  der(name: string, kind: string): Buffer {
    return this.bytes([kind, '-in', name, '-outform', 'DER']);
  }
}

export function rareTools(t: TestContext): RareTools {
  return new RareTools(tempDir(t, 'cw-rare-'));
}

/** "Nov 21 23:04:53 2026 GMT" (openssl's dates) → epoch ms. */
export function opensslDate(text: string): number {
  const m = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4}) GMT$/.exec(text.trim());
  if (!m) throw new Error(`not an openssl date: ${text}`);
  const month = 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(m[1]!) / 3;
  return Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
}

export interface OpensslCrlEntry {
  serial: string;
  revocationDate: number;
  reason?: string;
  invalidityDate?: number;
}

/**
 * The entries of `openssl crl -noout -text`: "Serial Number: 1001", "Revocation Date: …", then under
 * "CRL entry extensions:" the reason text ("Key Compromise") and "Invalidity Date" on the next line.
 */
export function opensslCrlEntries(text: string): OpensslCrlEntry[] {
  const section = text.split(/Revoked Certificates:/)[1] ?? '';
  const out: OpensslCrlEntry[] = [];
  const lines = section.split('\n').map((l) => l.trim());
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('Signature Algorithm')) break;
    const serial = /^Serial Number: ([0-9A-F]+)$/i.exec(line);
    if (serial) out.push({ serial: serial[1]!.toLowerCase(), revocationDate: 0 });
    const current = out[out.length - 1];
    if (!current) continue;
    if (line.startsWith('Revocation Date:')) current.revocationDate = opensslDate(line.slice('Revocation Date:'.length));
    if (line.startsWith('X509v3 CRL Reason Code')) current.reason = lines[i + 1];
    if (line.startsWith('Invalidity Date')) current.invalidityDate = opensslDate(lines[i + 1]!);
  }
  return out;
}

/** openssl's reason texts → the decoder's reason names. */
export const OPENSSL_REASONS: Record<string, string> = {
  Unspecified: 'UNSPECIFIED',
  'Key Compromise': 'KEYCOMPROMISE',
  'CA Compromise': 'CACOMPROMISE',
  'Affiliation Changed': 'AFFILIATIONCHANGED',
  Superseded: 'SUPERSEDED',
  'Cessation Of Operation': 'CESSATIONOFOPERATION',
  'Certificate Hold': 'CERTIFICATEHOLD',
  'Remove From CRL': 'REMOVEFROMCRL',
  'Privilege Withdrawn': 'PRIVILEGEWITHDRAWN',
  'AA Compromise': 'AACOMPROMISE',
};

/** openssl's "C = FR, O = Test, CN = CA" (-nameopt oneline default of `crl -issuer`) as RFC 4514. */
export const onelineToRfc4514 = (text: string): string =>
  text
    .trim()
    .split(', ')
    .map((part) => part.replace(' = ', '='))
    .reverse()
    .join(',');
