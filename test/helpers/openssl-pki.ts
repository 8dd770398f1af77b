import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate made by openssl, with its key. */
export interface Made {
  name: string;
  subject: string;
  certPath: string;
  keyPath: string;
  pem: string;
  /** The issuing CA's directory (openssl ca database), for CAs only. */
  dbDir: string;
}

export interface IssueOptions {
  /** Extension lines (openssl x509v3 config syntax). */
  ext: string[];
  /** Reuse an existing key (two certificates of one key). */
  keyPath?: string;
  /** openssl ca dates, YYYYMMDDHHMMSSZ. */
  start?: string;
  end?: string;
  days?: number;
}

export const CA_EXT = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid:always'];
export const LEAF_EXT = ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth,clientAuth', 'subjectKeyIdentifier=hash', 'authorityKeyIdentifier=keyid:always'];

/** Runs openssl; a failure throws with its stderr. */
export function openssl(args: string[], cwd?: string): string {
  try {
    return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

/**
 * Real PKI objects made with the openssl CLI in a directory: EC P-256 keys, self-signed roots (`req -x509`),
 * certificates issued by `openssl ca` (each CA keeps its own database, so it can revoke and generate CRLs).
 */
export class OpensslPki {
  private n = 0;
  constructor(readonly dir: string) {}

  key(name: string): string {
    const path = join(this.dir, `${name}.key`);
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
    return path;
  }

  root(name: string, subject: string, options: { keyPath?: string; ext?: string[]; days?: number } = {}): Made {
    const keyPath = options.keyPath ?? this.key(name);
    const certPath = join(this.dir, `${name}.pem`);
    const ext = options.ext ?? ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash'];
    const config = this.write(`${name}-req.cnf`, ['[req]', 'distinguished_name = dn', '[dn]', '[ext]', ...ext].join('\n'));
    openssl(['req', '-x509', '-new', '-config', config, '-extensions', 'ext', '-key', keyPath, '-subj', subject, '-days', String(options.days ?? 3650), '-sha256', '-out', certPath]);
    return { name, subject, certPath, keyPath, pem: readFileSync(certPath, 'utf8'), dbDir: this.database(name) };
  }

  issue(name: string, subject: string, issuer: Made, options: IssueOptions): Made {
    const keyPath = options.keyPath ?? this.key(name);
    const csr = join(this.dir, `${name}.csr`);
    const certPath = join(this.dir, `${name}.pem`);
    const req = this.write(`${name}-req.cnf`, ['[req]', 'distinguished_name = dn', '[dn]'].join('\n'));
    openssl(['req', '-new', '-config', req, '-key', keyPath, '-subj', subject, '-out', csr]);
    const ext = this.write(`${name}-ext.cnf`, ['[ext]', ...options.ext].join('\n'));
    const dates = options.start && options.end ? ['-startdate', options.start, '-enddate', options.end] : ['-days', String(options.days ?? 365)];
    openssl(['ca', '-batch', '-notext', '-preserveDN', '-config', join(issuer.dbDir, 'ca.cnf'), '-cert', issuer.certPath, '-keyfile', issuer.keyPath, '-in', csr, '-out', certPath, '-extfile', ext, '-extensions', 'ext', ...dates]);
    return { name, subject, certPath, keyPath, pem: readFileSync(certPath, 'utf8'), dbDir: this.database(name) };
  }

  revoke(cert: Made, issuer: Made, reason = 'keyCompromise'): void {
    openssl(['ca', '-config', join(issuer.dbDir, 'ca.cnf'), '-cert', issuer.certPath, '-keyfile', issuer.keyPath, '-revoke', cert.certPath, '-crl_reason', reason]);
  }

  /** A CRL of `issuer` (its revocations so far), signed with `keyPath` (default: the issuer's key). */
  crl(issuer: Made, options: { hours?: number; keyPath?: string; out?: string } = {}): { pem: string; der: Buffer } {
    const out = options.out ?? join(this.dir, `${issuer.name}-${++this.n}.crl.pem`);
    openssl(['ca', '-gencrl', '-config', join(issuer.dbDir, 'ca.cnf'), '-cert', issuer.certPath, '-keyfile', options.keyPath ?? issuer.keyPath, '-crlhours', String(options.hours ?? 1), '-out', out]);
    openssl(['crl', '-in', out, '-outform', 'DER', '-out', `${out}.der`]);
    return { pem: readFileSync(out, 'utf8'), der: readFileSync(`${out}.der`) };
  }

  /** `openssl verify` of `leaf` against `root` with `untrusted` intermediates: ok, and openssl's words. */
  verify(leaf: Made, root: Made, untrusted: Made[] = []): { ok: boolean; output: string } {
    const args = ['verify', '-CAfile', root.certPath];
    if (untrusted.length > 0) {
      const bundle = this.write(`untrusted-${++this.n}.pem`, untrusted.map((c) => c.pem).join(''));
      args.push('-untrusted', bundle);
    }
    args.push(leaf.certPath);
    const run = spawnSync('openssl', args, { encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  }

  /** serial of a certificate as openssl prints it (whole bytes), lower-case: the decoders' form. */
  serial(cert: Made): string {
    return openssl(['x509', '-in', cert.certPath, '-noout', '-serial']).trim().replace(/^serial=/, '').toLowerCase();
  }

  private database(name: string): string {
    const dir = join(this.dir, `${name}-db`);
    mkdirSync(join(dir, 'new'), { recursive: true });
    writeFileSync(join(dir, 'index.txt'), '');
    writeFileSync(join(dir, 'serial'), `${(1000 + Math.floor(Math.random() * 9000)).toString(16).padStart(4, '0')}01\n`);
    writeFileSync(join(dir, 'crlnumber'), '01\n');
    const config = [
      '[ca]',
      'default_ca = this',
      '[this]',
      `dir = ${dir}`,
      'database = $dir/index.txt',
      'new_certs_dir = $dir/new',
      'serial = $dir/serial',
      'crlnumber = $dir/crlnumber',
      'default_md = sha256',
      'policy = any',
      'unique_subject = no',
      'email_in_dn = no',
      '[any]',
      'commonName = supplied',
      'organizationName = optional',
      'organizationalUnitName = optional',
      'countryName = optional',
    ].join('\n');
    writeFileSync(join(dir, 'ca.cnf'), `${config}\n`);
    return dir;
  }

  private write(file: string, text: string): string {
    const path = join(this.dir, file);
    writeFileSync(path, `${text}\n`);
    return path;
  }
}
