import type { Kernel } from '../../../core/kernel.js';
import { opensslTime } from '../../helpers/pki-tools.js';
import { openssl, type OpenSsl } from '../../helpers/openssl.js';
import type { TestContext } from '../../helpers/kernel.js';

/** A certificate made by openssl and what openssl itself says about it. */
export interface MadeCertificate {
  pem: string;
  /** openssl x509 -fingerprint -sha1, lower-case hex without colons. */
  sha1: string;
  serial: string;
  notBefore: number;
  notAfter: number;
}

export interface Fixtures {
  ssl: OpenSsl;
  /** RSA-2048, self-signed, SANs: 2 DNS (one with capitals), 2 IP (v4, v6), email, URI. */
  rsa: MadeCertificate;
  /** EC P-256 self-signed CA. */
  ecCa: MadeCertificate;
  /** EC P-256 leaf issued by ecCa (not self-signed), one DNS SAN. */
  ecLeaf: MadeCertificate;
  /** A PKCS#10 request (not a certificate). */
  csr: string;
  /** Fresh self-signed EC certificates, one per call. */
  another(cn: string): MadeCertificate;
}

function describe(ssl: OpenSsl, file: string): MadeCertificate {
  const field = (flag: string): string => ssl.run(['x509', '-in', file, '-noout', flag]).trim().replace(/^[^=]+=/, '');
  return {
    pem: ssl.read(file).toString('utf8'),
    sha1: field('-fingerprint').replace(/:/g, '').toLowerCase(),
    serial: field('-serial').toLowerCase(),
    notBefore: opensslTime(field('-startdate')),
    notAfter: opensslTime(field('-enddate')),
  };
}

export function makeFixtures(t: TestContext): Fixtures {
  const ssl = openssl(t);
  ssl.write(
    'rsa.cnf',
    '[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=DNS:www.Example.com,DNS:api.example.com,IP:192.0.2.1,IP:2001:db8::1,email:ops@example.com,URI:https://example.com/app\nextendedKeyUsage=serverAuth\n',
  );
  ssl.run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'rsa.key', '-subj', '/C=FR/O=Certwright/CN=www.example.com', '-config', 'rsa.cnf', '-extensions', 'ext', '-days', '30', '-sha256', '-out', 'rsa.pem']);
  ssl.write('ca.cnf', '[req]\ndistinguished_name=dn\n[dn]\n[ext]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
  ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-subj', '/O=Certwright/CN=Inventory Test CA', '-config', 'ca.cnf', '-extensions', 'ext', '-days', '365', '-out', 'ca.pem']);
  ssl.run(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-subj', '/O=Certwright/CN=leaf.example.com', '-config', 'rsa.cnf', '-out', 'leaf.csr']);
  ssl.write('leaf.ext', 'subjectAltName=DNS:leaf.example.com\n');
  ssl.run(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '90', '-extfile', 'leaf.ext', '-out', 'leaf.pem']);
  let n = 0;
  return {
    ssl,
    rsa: describe(ssl, 'rsa.pem'),
    ecCa: describe(ssl, 'ca.pem'),
    ecLeaf: describe(ssl, 'leaf.pem'),
    csr: ssl.read('leaf.csr').toString('utf8'),
    another(cn: string) {
      const file = `another-${++n}.pem`;
      ssl.run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${file}.key`, '-subj', `/CN=${cn}`, '-config', 'ca.cnf', '-days', '10', '-out', file]);
      return describe(ssl, file);
    },
  };
}

export const INVENTORY_TABLES = ['inv_certificates', 'inv_certificate_sans', 'inv_certificate_labels', 'inv_certificate_metadata', 'inv_certificate_facets'] as const;

/** Row counts of every inventory table (to show that a refused write wrote nothing). */
export async function rowCounts(kernel: Kernel): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of INVENTORY_TABLES) {
    const row = (await kernel.db.knex(table).count({ n: '*' }).first()) as { n: number | string };
    out[table] = Number(row.n);
  }
  return out;
}

export const eventCodes = async (kernel: Kernel): Promise<string[]> =>
  ((await kernel.db.knex('events').where({ module: 'inventory' }).orderBy('seq').select('code')) as { code: string }[]).map((e) => e.code);
