/**
 * A real OpenLDAP server (`slapd`, Debian's slapd package) on a loopback port for the LDAP datasource tests: an
 * MDB database under dc=example,dc=com in a temporary folder, run in the foreground from a slapd.conf written
 * here, loaded with `ldapadd` (ldap-utils) as its root DN. Started once per test file, stopped by its PID.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../connectors/acme-upstream/pebble.js';
import { startDaemon } from '../../helpers/daemon.js';
import { tempDir, type TestContext } from '../../helpers/kernel.js';

const run = promisify(execFile);

export const SUFFIX = 'dc=example,dc=com';
/** A reader the datasource binds as, and its password (a secret the tests look for in answers and logs). */
export const READER = { dn: `cn=reader,${SUFFIX}`, password: 'Ldap-Reader-Secret-7f3a' } as const;
const ROOT = { dn: `cn=admin,${SUFFIX}`, password: 'Ldap-Root-Secret-19bd' } as const;

export interface Slapd {
  url: string;
}

/** The hosts of the CMDB branch: host name → owner. */
export const LDAP_HOSTS: Record<string, string> = {
  'web1.example.com': 'alice@example.com',
  'db1.example.com': 'bob@example.com',
  'mail.example.com': 'carol@example.com',
};

export async function startSlapd(t: TestContext): Promise<Slapd> {
  const dir = tempDir(t, 'cw-slapd-');
  const db = join(dir, 'db');
  mkdirSync(db);
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'slapd.conf'),
    `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile ${join(dir, 'slapd.pid')}
argsfile ${join(dir, 'slapd.args')}
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "${SUFFIX}"
rootdn "${ROOT.dn}"
rootpw ${ROOT.password}
directory ${db}
access to attrs=userPassword by anonymous auth by self write by * none
access to * by users read by * none
`,
  );
  await startDaemon(t, 'slapd', '/usr/sbin/slapd', ['-d', '256', '-f', join(dir, 'slapd.conf'), '-h', `${url}/`], (log) => /slapd starting/.test(log));
  const entries = [
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    `dn: ${READER.dn}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\nuserPassword: ${READER.password}`,
    `dn: ou=hosts,${SUFFIX}\nobjectClass: organizationalUnit\nou: hosts`,
    ...Object.entries(LDAP_HOSTS).map(([host, owner]) => `dn: cn=${host},ou=hosts,${SUFFIX}\nobjectClass: device\ncn: ${host}\ndescription: ${owner}\nl: Paris`),
  ];
  const ldif = join(dir, 'data.ldif');
  writeFileSync(ldif, `${entries.join('\n\n')}\n`);
  await run('ldapadd', ['-x', '-H', url, '-D', ROOT.dn, '-w', ROOT.password, '-f', ldif]);
  return { url };
}
