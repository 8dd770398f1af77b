import { execFileSync, execSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DecodedExtensions, SubjectAlternateName } from '../../core/pki/x509/model.js';
import { tempDir, type TestContext } from './kernel.js';

/**
 * The openssl CLI in a temp dir of the test: the reference the PKI decoders and issuer are compared
 * with. Commands run with the dir as cwd, so file names are relative.
 */
export class OpenSsl {
  constructor(readonly dir: string) {}

  /** Runs `openssl <args>`; stdout as UTF-8 text (throws with stderr on failure). */
  run(args: string[], input?: string | Uint8Array): string {
    return execFileSync('openssl', args, { cwd: this.dir, input, stdio: ['pipe', 'pipe', 'pipe'] }).toString('utf8');
  }

  /** A shell pipeline (for `… | openssl pkey … | sha256sum`). */
  shell(command: string): string {
    return execSync(command, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
  }

  write(name: string, content: string | Uint8Array): string {
    writeFileSync(join(this.dir, name), content);
    return name;
  }

  read(name: string): Buffer {
    return readFileSync(join(this.dir, name));
  }

  /** A private key: rsa:<bits>, ec:<curve>, ed25519, ed448. Returns the file name. */
  key(name: string, spec: string): string {
    const [alg, param] = spec.split(':');
    const args = alg === 'rsa' ? ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${param}`] : alg === 'ec' ? ['-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${param}`] : ['-algorithm', spec.toUpperCase()];
    this.run(['genpkey', ...args, '-out', name]);
    return name;
  }

  /** The DER bytes of a PEM file (any kind openssl can convert). */
  der(name: string, kind: 'x509' | 'req' | 'crl' = 'x509'): Buffer {
    return execFileSync('openssl', [kind, '-in', name, '-outform', 'DER'], { cwd: this.dir });
  }
}

export function openssl(t: TestContext): OpenSsl {
  return new OpenSsl(tempDir(t, 'cw-openssl-'));
}

/**
 * `openssl x509 -noout -ext …` (or `req -noout -text`) output as {name: {critical, text}}: the header
 * line ("X509v3 Key Usage: critical") and its indented body, dedented by four spaces.
 */
export function extensionTexts(output: string): Record<string, { critical: boolean; text: string }> {
  const entries: { name: string; critical: boolean; lines: string[] }[] = [];
  for (const line of output.split('\n')) {
    const header = line.startsWith(' ') ? null : /^(\S.*?):\s*(critical)?\s*$/.exec(line);
    if (header) entries.push({ name: header[1]!, critical: header[2] === 'critical', lines: [] });
    else if (entries.length && line.startsWith('    ')) entries[entries.length - 1]!.lines.push(line.slice(4).trimEnd());
  }
  return Object.fromEntries(entries.map((e) => [e.name, { critical: e.critical, text: e.lines.join('\n') }]));
}

/** An IP (or a name-constraint CIDR) as openssl prints it: IPv6 uncompressed, upper case, masks spelled out. */
export function opensslIp(text: string): string {
  const [address, prefix] = text.split('/') as [string, string | undefined];
  const v6 = address.includes(':');
  const words = (a: string): string[] => {
    const [head, tail] = a.split('::') as [string, string | undefined];
    const h = head ? head.split(':') : [];
    const t = tail !== undefined ? (tail ? tail.split(':') : []) : [];
    return tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  };
  const show = (a: string): string => (v6 ? words(a).map((w) => parseInt(w, 16).toString(16).toUpperCase()).join(':') : a);
  if (prefix === undefined) return show(address);
  const bits = Number(prefix);
  const bytes = Array.from({ length: v6 ? 16 : 4 }, (_, i) => (bits >= 8 * (i + 1) ? 255 : bits <= 8 * i ? 0 : (0xff << (8 - (bits - 8 * i))) & 0xff));
  const mask = v6 ? Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16).toUpperCase()).join(':') : bytes.join('.');
  return `${show(address)}/${mask}`;
}

/** An RFC 4514 DN as OpenSSL's one-line form (/CN=a/O=b, first RDN first), for DirName entries. */
export function opensslOneline(dn: string): string {
  const rdns = dn.split(/(?<!\\),/).reverse();
  return rdns.map((r) => `/${r.replace(/\\(.)/g, '$1')}`).join('');
}

/** One SAN as `openssl x509 -ext subjectAltName` prints it. */
export function opensslSan(s: SubjectAlternateName): string {
  switch (s.sanType) {
    case 'DNSNAME':
      return `DNS:${s.value}`;
    case 'IPADDRESS':
      return `IP Address:${opensslIp(s.value)}`;
    case 'RFC822NAME':
      return `email:${s.value}`;
    case 'URI':
      return `URI:${s.value}`;
    case 'OTHERNAME_UPN':
      return `othername: UPN::${s.value}`;
    case 'OTHERNAME': {
      const colon = s.value.indexOf(':');
      return `othername: ${s.value.slice(0, colon)}::${s.value.slice(colon + 1)}`;
    }
    case 'REGISTERED_ID':
      return `Registered ID:${s.value}`;
    case 'DIRECTORYNAME':
      return `DirName:${opensslOneline(s.value)}`;
    default:
      return `${s.sanType}:${s.value}`;
  }
}

const KU_TEXT: Record<string, string> = {
  digitalSignature: 'Digital Signature',
  nonRepudiation: 'Non Repudiation',
  keyEncipherment: 'Key Encipherment',
  dataEncipherment: 'Data Encipherment',
  keyAgreement: 'Key Agreement',
  keyCertSign: 'Certificate Sign',
  cRLSign: 'CRL Sign',
  encipherOnly: 'Encipher Only',
  decipherOnly: 'Decipher Only',
};
const EKU_TEXT: Record<string, string> = {
  serverAuth: 'TLS Web Server Authentication',
  clientAuth: 'TLS Web Client Authentication',
  codeSigning: 'Code Signing',
  emailProtection: 'E-mail Protection',
  timeStamping: 'Time Stamping',
  OCSPSigning: 'OCSP Signing',
  msSmartcardLogin: 'Microsoft Smartcard Login',
  anyExtendedKeyUsage: 'Any Extended Key Usage',
};
const colonHex = (h: string): string => h.toUpperCase().replace(/(..)(?!$)/g, '$1:');
const NAME_CONSTRAINT = (s: SubjectAlternateName): string => (s.sanType === 'IPADDRESS' ? `IP:${opensslIp(s.value)}` : opensslSan(s));

/**
 * Our decoded extensions rendered the way `openssl x509 -ext` prints them (names and body text), so a
 * test compares the two outputs field by field. Certificate policies: Policy and CPS lines only.
 */
export function renderExtensions(ext: DecodedExtensions, sans: SubjectAlternateName[]): Record<string, { critical: boolean; text: string }> {
  const critical = (oid: string): boolean => ext.all.find((e) => e.oid === oid)?.critical ?? false;
  const out: Record<string, { critical: boolean; text: string }> = {};
  if (sans.length) out['X509v3 Subject Alternative Name'] = { critical: critical('2.5.29.17'), text: sans.map(opensslSan).join(', ') };
  if (ext.keyUsage) out['X509v3 Key Usage'] = { critical: ext.keyUsage.critical, text: ext.keyUsage.usages.map((u) => KU_TEXT[u]).join(', ') };
  if (ext.extendedKeyUsage) out['X509v3 Extended Key Usage'] = { critical: ext.extendedKeyUsage.critical, text: ext.extendedKeyUsage.usages.map((u) => EKU_TEXT[u] ?? u).join(', ') };
  if (ext.basicConstraints) {
    const bc = ext.basicConstraints;
    out['X509v3 Basic Constraints'] = { critical: bc.critical, text: `CA:${bc.ca ? 'TRUE' : 'FALSE'}${bc.pathLength !== undefined ? `, pathlen:${bc.pathLength}` : ''}` };
  }
  if (ext.subjectKeyIdentifier) out['X509v3 Subject Key Identifier'] = { critical: critical('2.5.29.14'), text: colonHex(ext.subjectKeyIdentifier) };
  if (ext.authorityKeyIdentifier) {
    const a = ext.authorityKeyIdentifier;
    const lines = [...(a.keyIdentifier ? [colonHex(a.keyIdentifier)] : []), ...(a.issuer ?? []).map((dn) => `DirName:${opensslOneline(dn)}`), ...(a.serial ? [`serial:${colonHex(a.serial.length % 2 ? `0${a.serial}` : a.serial)}`] : [])];
    out['X509v3 Authority Key Identifier'] = { critical: critical('2.5.29.35'), text: lines.join('\n') };
  }
  if (ext.crlDistributionPoints) out['X509v3 CRL Distribution Points'] = { critical: critical('2.5.29.31'), text: ext.crlDistributionPoints.map((u) => `Full Name:\n  URI:${u}`).join('\n') };
  if (ext.authorityInfoAccess) {
    const { ocsp, caIssuers } = ext.authorityInfoAccess;
    out['Authority Information Access'] = { critical: critical('1.3.6.1.5.5.7.1.1'), text: [...ocsp.map((u) => `OCSP - URI:${u}`), ...caIssuers.map((u) => `CA Issuers - URI:${u}`)].join('\n') };
  }
  if (ext.certificatePolicies) {
    out['X509v3 Certificate Policies'] = { critical: critical('2.5.29.32'), text: ext.certificatePolicies.flatMap((p) => [`Policy: ${p.oid === '2.5.29.32.0' ? 'X509v3 Any Policy' : p.oid}`, ...(p.cps ?? []).map((c) => `  CPS: ${c}`)]).join('\n') };
  }
  if (ext.nameConstraints) {
    const nc = ext.nameConstraints;
    const lines = [...(nc.permitted.length ? ['Permitted:', ...nc.permitted.map((n) => `  ${NAME_CONSTRAINT(n)}`)] : []), ...(nc.excluded.length ? ['Excluded:', ...nc.excluded.map((n) => `  ${NAME_CONSTRAINT(n)}`)] : [])];
    out['X509v3 Name Constraints'] = { critical: nc.critical, text: lines.join('\n') };
  }
  return out;
}
