import t from 'tap';
import type { CertificateObject } from '../../../core/inventory/types.js';
import { CERTIFICATE_PROPERTIES } from '../../../core/inventory/view.js';
import { ADMIN_HEADERS, bootKernel } from '../../helpers/kernel.js';
import { DAY, seedInventory, type SeedCertificate } from '../../helpers/inventory-seed.js';

/**
 * The HCQL table (issue 6 item 5): 16 certificates with distinct profiles, teams, owners, SANs, labels,
 * metadata, dates and flags, and ≥ 60 queries each with the exact set of certificates it must return,
 * through POST /api/v1/certificates/search. Runs on SQLite, and on MariaDB with TEST_DATABASE_URL.
 * Status: revoked = D; expired = C, P; every other one is valid (L is not yet valid but not expired).
 */
const hour = 3_600_000;
const SEEDS: SeedCertificate[] = [
  { name: 'A', subject: 'CN=web1.example.com,O=Acme,C=FR', sans: [{ sanType: 'DNSNAME', value: 'web1.example.com' }, { sanType: 'DNSNAME', value: 'www.example.com' }], issuer: 'acme', key: 'ec', notBefore: -100, notAfter: 200, input: { profile: 'webserver', team: 'web', owner: 'alice', module: 'webra', labels: [{ key: 'env', value: 'prod' }, { key: 'app', value: 'shop' }], metadata: [{ key: 'ticket', value: 'T-1' }], contactEmail: 'ops@example.com' } },
  { name: 'B', subject: 'CN=web2.example.com,O=Acme,C=FR', sans: [{ sanType: 'DNSNAME', value: 'web2.example.com' }, { sanType: 'DNSNAME', value: 'api.example.com' }, { sanType: 'IPADDRESS', value: '10.0.0.2' }], issuer: 'acme', key: 'rsa', notBefore: -30, notAfter: 20, input: { profile: 'webserver', team: 'web', owner: 'bob', module: 'webra', labels: [{ key: 'env', value: 'staging' }] } },
  { name: 'C', subject: 'CN=old.example.com,O=Acme', sans: [{ sanType: 'DNSNAME', value: 'old.example.com' }], issuer: 'acme', key: 'ec', notBefore: -400, notAfter: -10, input: { profile: 'webserver', team: 'web', owner: 'alice', module: 'webra', labels: [{ key: 'env', value: 'prod' }] } },
  { name: 'D', subject: 'CN=revoked.example.com,O=Acme', sans: [{ sanType: 'DNSNAME', value: 'revoked.example.com' }], issuer: 'acme', key: 'ec', notBefore: -50, notAfter: 100, input: { profile: 'webserver', team: 'sec', owner: 'bob', module: 'webra', revoked: true, revocationReason: 'keycompromise', revocationDate: Date.now() - 5 * DAY } },
  { name: 'E', subject: 'CN=Alice Martin,O=Acme', sans: [{ sanType: 'RFC822NAME', value: 'alice@example.com' }], issuer: 'acme', key: 'ed25519', notBefore: -10, notAfter: 300, input: { profile: 'smime', team: 'people', owner: 'alice', module: 'webra', labels: [{ key: 'env', value: 'prod' }], contactEmail: 'alice@example.com' } },
  { name: 'F', subject: 'CN=vpn.corp.example.org,O=Corp', sans: [{ sanType: 'DNSNAME', value: 'vpn.corp.example.org' }], issuer: 'corp', key: 'rsa', notBefore: -20, notAfter: 25, input: { profile: 'vpn', team: 'net', owner: 'dave', module: 'est', metadata: [{ key: 'ticket', value: 'T-2' }, { key: 'site', value: 'paris' }] } },
  { name: 'G', subject: 'CN=Acme Root,O=Acme', issuer: 'self', ca: true, key: 'ec', notBefore: -1000, notAfter: 3000, input: { module: 'discovery' } },
  {
    name: 'H',
    subject: 'CN=printer.local',
    sans: [{ sanType: 'DNSNAME', value: 'printer.local' }, { sanType: 'IPADDRESS', value: '192.168.1.50' }],
    issuer: 'self',
    key: 'ec',
    notBefore: -5,
    notAfter: 50,
    input: {
      module: 'discovery',
      discoveryInfo: [{ campaign: 'lan', lastDiscoveryDate: Date.now() - DAY }],
      discoveryData: [{ ip: '192.168.1.50', hostnames: ['printer.local'], operatingSystems: ['linux'], paths: [], usages: ['https'], sources: ['netscan'], tlsPorts: [{ port: 443 }, { port: 8443 }] }],
      discoveredTrusted: false,
    },
  },
  { name: 'I', subject: [{ type: 'CN', value: `O'Brien "quoted", test` }], sans: [{ sanType: 'DNSNAME', value: 'odd.example.com' }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 400, input: { profile: 'webserver', team: 'web', owner: 'carol', module: 'webra', labels: [{ key: 'app', value: 'a%b_c' }] } },
  { name: 'J', subject: [{ type: 'CN', value: 'Zoë Ünïcode 🚀' }], issuer: 'acme', key: 'ec', notBefore: -1, notAfter: 100, input: { profile: 'smime', team: 'people', owner: 'erin', module: 'webra' } },
  {
    name: 'K',
    subject: 'CN=*.apps.example.com',
    sans: [{ sanType: 'DNSNAME', value: '*.apps.example.com' }, { sanType: 'DNSNAME', value: 'apps.example.com' }],
    issuer: 'acme',
    key: 'ec',
    notBefore: -80,
    notAfter: 10,
    input: {
      profile: 'webserver',
      team: 'web',
      owner: 'carol',
      module: 'webra',
      labels: [{ key: 'env', value: 'prod' }, { key: 'app', value: 'portal' }],
      triggerResults: [{ name: 'expiry-mail', event: 'expire', triggerType: 'email', lastExecutionDate: Date.now() - hour, status: 'failure', retryable: true }],
    },
  },
  { name: 'L', subject: 'CN=future.example.com', sans: [{ sanType: 'DNSNAME', value: 'future.example.com' }], issuer: 'acme', key: 'ec', notBefore: 10, notAfter: 375, input: { profile: 'webserver', team: 'web', owner: 'alice', module: 'webra' } },
  { name: 'M', subject: '', sans: [{ sanType: 'IPADDRESS', value: '10.0.0.3' }], issuer: 'corp', key: 'ec', notBefore: -3, notAfter: 60, input: { profile: 'device', team: 'net', owner: 'dave', module: 'scep' } },
  {
    name: 'N',
    subject: 'CN=lb.example.net',
    sans: [{ sanType: 'DNSNAME', value: 'lb.example.net' }],
    issuer: 'corp',
    key: 'ec',
    notBefore: -60,
    notAfter: 90,
    input: {
      profile: 'webserver',
      team: 'net',
      owner: 'dave',
      module: 'webra',
      thirdPartyData: [{ connector: 'f5', id: 'lb-1' }],
      triggerResults: [{ name: 'sync', event: 'issue', triggerType: 'webhook', lastExecutionDate: Date.now() - 2 * hour, status: 'success', retryable: false }],
    },
  },
  { name: 'O', subject: 'CN=enc.example.com', sans: [{ sanType: 'DNSNAME', value: 'enc.example.com' }], issuer: 'acme', key: 'rsa', notBefore: -15, notAfter: 350, input: { profile: 'smime', team: 'people', owner: 'erin', module: 'webra', escrowed: true, holderId: 'h-1' } },
  { name: 'P', subject: 'CN=archived.example.com', issuer: 'acme', key: 'ec', notBefore: -500, notAfter: -100, input: { profile: 'webserver', team: 'web', owner: 'bob', module: 'webra', archived: true, labels: [{ key: 'env', value: 'prod' }] } },
];

const ALL = 'ABCDEFGHIJKLMNOP';
const except = (names: string): string => [...ALL].filter((n) => !names.includes(n)).join('');

t.test('HCQL on a seeded inventory', async (t) => {
  const kernel = await bootKernel(t);
  const seeded = await seedInventory(kernel, SEEDS, [{ name: 'env', regex: '[a-z]+' }, { name: 'app' }]);
  const byId = new Map([...seeded].map(([name, object]) => [object._id, name]));
  const cert = (name: string): CertificateObject => seeded.get(name)!;
  const colonHex = (hex: string): string => hex.toUpperCase().match(/.{1,2}/g)!.join(':');
  const q = (text: string): string => JSON.stringify(text);

  /** query → the names of the certificates it returns. */
  const CASES: [string | null, string][] = [
    ['', ALL],
    [null, ALL],
    ['status is valid', 'ABEFGHIJKLMNO'],
    ['status is expired', 'CP'],
    ['status is revoked', 'D'],
    ['status is not valid', 'CDP'],
    ['status is not revoked', except('D')],
    ['profile equals "webserver"', 'ABCDIKLNP'],
    ['profile = "webserver" and team = "web"', 'ABCIKLP'],
    ['profile equals "smime" or profile equals "vpn"', 'EFJO'],
    ['profile in ["smime", "vpn"]', 'EFJO'],
    ['profile in ("smime", "vpn")', 'EFJO'],
    ['profile not in ["webserver"]', 'EFGHJMO'],
    ['team equals "net"', 'FMN'],
    ['not team equals "web"', 'DEFGHJMNO'],
    ['owner = "alice" and status is valid', 'AEL'],
    ['owner equals "alice" || owner equals "bob"', 'ABCDELP'],
    ['owner != "alice"', 'BDFGHIJKMNOP'],
    ['module equals "discovery"', 'GH'],
    ['module equals "est"', 'F'],
    ['keytype equals "rsa-2048"', 'BFO'],
    ['keytype equals "ed-25519"', 'E'],
    ['keytype equals "ec-secp256r1" and team equals "net"', 'MN'],
    ['san equals "www.example.com"', 'A'],
    ['san equals "WWW.EXAMPLE.COM"', 'A'],
    ['san equals "10.0.0.2"', 'B'],
    [String.raw`san matches "\\.example\\.com$"`, 'ABCDIKLO'],
    [String.raw`san matches "\\.apps\\.example\\.com$"`, 'K'],
    [String.raw`san matches "^api\\."`, 'B'],
    ['san contains "corp"', 'F'],
    ['san contains "EXAMPLE.NET"', 'N'],
    ['san in ["printer.local", "lb.example.net"]', 'HN'],
    ['san not exists', 'GJP'],
    ['san exists and not san contains "example"', 'HM'],
    [String.raw`san within ["^web[0-9]\\.", "^vpn\\."]`, 'ABF'],
    ['label.env equals "prod"', 'ACEKP'],
    ['label.env = "prod" and status is valid', 'AEK'],
    ['label.env exists', 'ABCEKP'],
    ['label.env not exists', 'DFGHIJLMNO'],
    ['label.env not in ["prod"]', 'BDFGHIJLMNO'],
    ['label.app contains "%"', 'I'],
    ['label.app contains "_"', 'I'],
    ['label.app equals "a%b_c"', 'I'],
    ['label.app in ["shop", "portal"]', 'AK'],
    ['metadata.ticket exists', 'AF'],
    ['metadata.site equals "paris"', 'F'],
    ['valid.until before 30d and status is valid', 'BFK'],
    ['valid.until after now and valid.until before "2200"', except('CP')],
    ['valid.until < -30d', 'P'],
    ['valid.from > now', 'L'],
    ['valid.from after -7d', 'HIJLM'],
    ['revocation.date exists', 'D'],
    ['revocation.reason equals "keycompromise"', 'D'],
    ['revocation.reason equals "KeyCompromise"', 'D'],
    ['certificate is selfsigned', 'GH'],
    ['certificate is not selfsigned', except('GH')],
    ['certificate is escrowed', 'O'],
    ['certificate is archived', 'P'],
    ['certificate is discovered', 'H'],
    ['discoverydata.tlsport equals 8443', 'H'],
    ['discoverydata.hostname equals "printer.local"', 'H'],
    ['discoveryinfo.campaign equals "lan"', 'H'],
    ['thirdparty.connector equals "f5"', 'N'],
    ['trigger.results has failure', 'K'],
    ['trigger.results has success', 'N'],
    ['trigger.results has no failure', except('K')],
    ['holderid equals "h-1"', 'O'],
    ['contactemail equals "alice@example.com"', 'E'],
    [`dn contains "o'brien"`, 'I'],
    ['dn contains "quoted"', 'I'],
    ['dn contains "Zoë"', 'J'],
    ['dn contains "🚀"', 'J'],
    [`dn equals ${q(cert('A').dn)}`, 'A'],
    [`issuer equals ${q(cert('F').issuer)}`, 'FMN'],
    ['issuer contains "Acme Issuing"', 'ABCDEIJKLOP'],
    [`serial equals ${q(colonHex(cert('A').serial))}`, 'A'],
    [`id equals ${q(cert('B')._id)}`, 'B'],
    [`thumbprint equals ${q(cert('E').thumbprint.toUpperCase())}`, 'E'],
    ['(team = "web" or team = "net") and not (profile = "webserver")', 'FM'],
    ['team = "web" and (owner = "alice" or owner = "carol") and status is valid', 'AIKL'],
    ['!(status is valid) && profile == "webserver"', 'CDP'],
    ['TEAM EQUALS "people" AND KEYTYPE = "rsa-2048"', 'O'],
    ['owner equals "nobody"', ''],
    // Exact on both engines (MariaDB's PAD SPACE / case-folding collations would match these: migration 0007).
    ['owner = "alice "', ''],
    ['owner = "ALICE"', ''],
    ['label.env = "prod "', ''],
    ['profile in ["webserver ", "SMIME"]', ''],
    ['profile matches "^(smime|vpn)$"', 'EFJO'],
  ];

  t.ok(CASES.length >= 60, `${CASES.length} cases`);

  async function search(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/search', headers: ADMIN_HEADERS, payload: body });
    return { status: res.statusCode, json: res.json() as Record<string, unknown> };
  }
  const names = (results: unknown): string =>
    (results as { _id: string }[])
      .map((r) => byId.get(r._id) ?? `?${r._id}`)
      .sort()
      .join('');

  for (const [query, expected] of CASES) {
    const { status, json } = await search({ query, pageSize: 1000, fields: [] });
    t.equal(status, 200, `${query}: 200`);
    t.equal(names(json.results), expected, `${query ?? 'null'} → ${expected || '∅'}`);
  }

  t.test('pages, sort, count and projection', async (t) => {
    const body = { query: 'profile = "webserver"', pageSize: 4, sortedBy: [{ element: 'notAfter', order: 'Asc' }], withCount: true, fields: ['dn', 'notAfter', 'labels'] };
    const pages: string[] = [];
    for (let pageIndex = 1; pageIndex <= 3; pageIndex++) {
      const { json } = await search({ ...body, pageIndex });
      pages.push((json.results as { _id: string }[]).map((r) => byId.get(r._id)).join(''));
      t.equal(json.pageIndex, pageIndex);
      t.equal(json.pageSize, 4);
      t.equal(json.count, 9, 'count of everything matched');
      t.equal(json.hasMore, pageIndex < 3);
      for (const r of json.results as Record<string, unknown>[]) {
        t.same(Object.keys(r).sort(), ['_id', 'dn', 'labels', 'notAfter'], 'only the requested fields and _id');
        t.type(r.notAfter, 'number');
        t.ok(Array.isArray(r.labels));
      }
    }
    t.same(pages, ['PCKB', 'NDAL', 'I'], 'ordered by notAfter across pages');
    const desc = await search({ query: 'team = "net"', sortedBy: [{ element: 'valid.until', order: 'Desc' }], fields: [] });
    t.equal((desc.json.results as { _id: string }[]).map((r) => byId.get(r._id)).join(''), 'NMF', 'query names sort too');
    const noCount = await search({ query: 'team = "net"' });
    t.notOk('count' in noCount.json, 'no count unless withCount');
    t.ok((noCount.json.results as Record<string, unknown>[]).every((r) => typeof r.certificate === 'string' && Array.isArray(r.subjectAlternateNames)), 'absent fields = everything');
    const zero = await search({ query: 'team = "net"', pageIndex: 0, withCount: true });
    t.equal(zero.json.pageIndex, 1, 'pageIndex 0 is the first page');
  });

  t.test('permissions on results', async (t) => {
    const { json } = await search({ query: 'team = "net" or module = "discovery"', fields: ['permissions'], pageSize: 100 });
    const rows = json.results as { _id: string; permissions: Record<string, boolean> }[];
    t.equal(rows.length, 5);
    for (const r of rows) {
      t.same(Object.keys(r).sort(), ['_id', 'permissions'], 'module/profile loaded for the rights, not answered');
      const name = byId.get(r._id)!;
      t.equal(r.permissions.revoke, !'GH'.includes(name), `${name}: administrator may revoke what has a profile`);
      t.equal(r.permissions.requestUpdate, !'GH'.includes(name));
    }
  });

  t.test('aggregate', async (t) => {
    const agg = async (body: Record<string, unknown>) => {
      const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/aggregate', headers: ADMIN_HEADERS, payload: body });
      t.equal(res.statusCode, 200, res.body);
      return res.json() as { items: { _id: Record<string, unknown>; count: number }[]; count?: number };
    };
    const byProfile = await agg({ query: '', groupBy: ['profile'], withCount: true });
    t.same(
      byProfile.items.map((i) => [i._id.profile, i.count]),
      [['webserver', 9], ['smime', 3], [null, 2], ['device', 1], ['vpn', 1]],
      'by count, then key',
    );
    t.equal(byProfile.count, 5, 'number of groups');
    const byStatus = await agg({ query: 'profile = "webserver"', groupBy: ['profile', 'status'], sortOrder: 'KeyAsc' });
    t.same(
      byStatus.items.map((i) => [i._id.profile, i._id.status, i.count]),
      [['webserver', 'expired', 2], ['webserver', 'revoked', 1], ['webserver', 'valid', 6]],
    );
    const having = await agg({ groupBy: ['team'], having: { operator: 'gte', value: 3 }, sortOrder: 'KeyAsc' });
    t.same(having.items.map((i) => [i._id.team, i.count]), [['net', 3], ['people', 3], ['web', 7]]);
    const labels = await agg({ query: 'label.env exists', groupBy: ['label.env'] });
    t.same(labels.items.map((i) => [i._id['label.env'], i.count]), [['prod', 5], ['staging', 1]]);
    const limited = await agg({ groupBy: ['owner'], limit: 2 });
    t.equal(limited.items.length, 2);
  });

  t.test('CSV', async (t) => {
    const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload: { query: 'team = "net" or profile = "smime"', sortedBy: [{ element: 'notAfter', order: 'Asc' }] } });
    t.equal(res.statusCode, 200);
    t.match(res.headers['content-type'], /^text\/csv/);
    const lines = res.body.trimEnd().split('\r\n');
    t.equal(lines[0]!.split(',')[0], '_id');
    t.equal(lines.length, 1 + 6, 'header + F M N E J O');
    t.match(lines[1]!, new RegExp(`^${cert('F')._id},`), 'sorted by notAfter: F first');
    const iso = new Date(cert('F').notAfter).toISOString();
    t.ok(lines[1]!.includes(iso), 'dates as ISO 8601');
    const projected = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload: { query: 'id = ' + q(cert('I')._id), fields: ['dn', 'labels'] } });
    const rows = projected.body.trimEnd().split('\r\n');
    t.equal(rows[0], '_id,dn,labels');
    t.ok(rows[1]!.includes('""'), 'quotes doubled inside a quoted cell');
    t.ok(rows[1]!.endsWith('app=a%b_c'));
  });

  t.test('CSV lines written from the rows equal those of the certificate objects', async (t) => {
    // A document property (grades) sends the export through objectsOf; without it, lines are written
    // straight from the rows (csvLines). Every other property, both ways, unfiltered and filtered.
    const every = CERTIFICATE_PROPERTIES.filter((p) => !['certificate', 'extensions', 'grades', 'thirdPartyData', 'triggerResults', 'discoveryData', 'discoveryInfo', 'requestedX509Data'].includes(p));
    for (const query of ['', 'team = "net" or label.env exists']) {
      const exported = async (fields: string[]) => {
        const res = await kernel.app.inject({ method: 'POST', url: '/api/v1/certificates/csv', headers: ADMIN_HEADERS, payload: { query, fields } });
        t.equal(res.statusCode, 200, res.statusCode === 200 ? 'exported' : res.body);
        return parseCsv(res.body);
      };
      const direct = await exported(every);
      const viaObjects = (await exported([...every, 'grades'])).map((row) => row.slice(0, -1));
      t.ok(direct.length > 5, `${query || 'everything'}: rows exported`);
      t.same(direct, viaObjects, `${query || 'everything'}: the same cells both ways`);
      t.ok(direct.some((row) => row[every.indexOf('subjectAlternateNames')]!.includes('; ')), 'a certificate with several SANs');
    }
  });

  t.test('dictionary', async (t) => {
    const res = await kernel.app.inject({ url: '/api/v1/certificates/search/dictionary', headers: ADMIN_HEADERS });
    t.equal(res.statusCode, 200);
    const text = res.body;
    for (const name of ['dn', 'san', 'valid.until', 'label', 'status']) t.ok(text.includes(`"${name}`), `mentions ${name}`);
  });

  t.test('bad queries are HQL-001, bad requests HQL-002', async (t) => {
    for (const query of ['dn equals', 'nosuchfield = "x"', 'status is sleepy', '(profile = "a"', 'valid.until before "not a date"', 'san matches "("']) {
      const { status, json } = await search({ query });
      t.equal(status, 400, query);
      t.equal(json.error, 'HQL-001', query);
    }
    for (const body of [{ sortedBy: [{ element: 'san', order: 'Asc' }] }, { fields: ['nope'] }, { sortedBy: [{ element: 'nope' }] }]) {
      const { status, json } = await search(body);
      t.equal(status, 400, JSON.stringify(body));
      t.equal(json.error, 'HQL-002');
    }
    const big = await search({ pageSize: 1001 });
    t.equal(big.status, 400, 'pageSize over 1000');
    const unknown = await search({ query: '', what: 1 });
    t.equal(unknown.status, 400, 'unknown member');
  });
});

/** RFC 4180 rows: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    else cell += c;
  }
  return rows;
}
