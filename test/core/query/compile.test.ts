import t from 'tap';
import { CERTIFICATE_LANGUAGE as L } from '../../../core/inventory/language.js';
import { ProblemError } from '../../../core/errors/index.js';
import { applyQuery, parseQuery, type QueryLanguage, type QueryNode } from '../../../core/query/index.js';
import { DAY, idOf, NOW, queryDb, TENANT, type Row } from './fixture.js';

/**
 * The compiler on a real database (SQLite, or MariaDB with TEST_DATABASE_URL): each query against a
 * handful of rows written straight into inv_certificates and its side tables, checked by the exact
 * set of rows it returns — and `not (query)` by the complement, NULLs included.
 */
const db = await queryDb(t);
t.comment(`engine: ${db.engine}`);

const rows: Row[] = [
  {
    name: 'A',
    dn: 'CN=web1.example.com,O=Acme',
    profile: 'webserver',
    team: 'web',
    owner: 'alice',
    grade: 'A',
    contactEmail: 'ops@example.com',
    sans: ['web1.example.com', 'www.example.com'],
    labels: { env: 'prod', app: 'shop' },
    metadata: { ticket: 'T-1' },
    notBefore: -100,
    notAfter: 200,
    serial: '1a2b3c',
  },
  { name: 'B', profile: 'webserver', team: 'web', owner: 'bob', sans: ['web2.example.com', 'api.example.com'], labels: { env: 'staging' }, notBefore: -30, notAfter: 20, facets: [['discovery.tlsport', '443']] },
  { name: 'C', profile: 'webserver', team: null, owner: 'alice', sans: ['old.example.com'], labels: { env: 'prod' }, notBefore: -400, notAfter: -10 },
  { name: 'D', profile: 'smime', team: 'sec', owner: null, sans: ['revoked.example.com'], revoked: true, revocationDate: NOW - 5 * DAY, revocationReason: 'keycompromise' },
  {
    name: 'E',
    dn: 'CN=Zoë Ünïcode 🚀',
    profile: null,
    module: null,
    selfSigned: true,
    discovered: true,
    discoveredTrusted: true,
    notBefore: 10,
    notAfter: 375,
    facets: [
      ['discovery.tlsport', '8443'],
      ['discovery.tlsport', '9'],
    ],
  },
  {
    name: 'F',
    profile: 'vpn',
    team: 'net',
    owner: 'dave',
    grade: 'B',
    sans: ['vpn.corp.example.org', 'WWW.Example.ORG'],
    discovered: true,
    discoveredTrusted: false,
    metadata: { site: 'paris' },
    labels: { 'my key': 'x y' },
    facets: [['trigger.status', 'failure']],
  },
  {
    name: 'G',
    dn: `CN=O'Brien "q", test`,
    profile: 'webserver',
    team: '',
    owner: 'Alice',
    sans: ['g.example.net'],
    labels: { app: 'a%b_c' },
    facets: [
      ['discovery.tlsport', '10'],
      ['trigger.status', 'success'],
    ],
  },
  // Another tenant: never in any answer (side tables are matched on the tenant too).
  { name: 'X', tenant: 'tenant-b', profile: 'webserver', sans: ['web1.example.com'], labels: { env: 'prod' } },
];
await db.insert(rows);
const ALL = 'ABCDEFG';

const colonHex = (hex: string): string => hex.toUpperCase().match(/.{1,2}/g)!.join(':');
const q = (s: string): string => JSON.stringify(s);

const table: [string, string][] = [
  ['', ALL],
  // Columns.
  ['profile equals "webserver"', 'ABCG'],
  ['profile = "webserver" and team = "web"', 'AB'],
  ['profile != "webserver"', 'DEF'],
  ['profile not equals "webserver"', 'DEF'],
  ['profile in ("smime", "vpn")', 'DF'],
  ['profile in ["webserver"]', 'ABCG'],
  ['profile not in ["webserver", "smime"]', 'EF'],
  ['team exists', 'ABDF'],
  ['team not exists', 'CEG'],
  ['owner = "alice"', 'AC'],
  ['owner contains "ALI"', 'ACG'],
  ['owner contains ""', 'ABCFG'],
  ['owner matches "^[Aa]lice$"', 'ACG'],
  ['owner matches "^alice$"', 'AC'],
  ['owner matches "LIC"', ''],
  ['owner within ["^b", "^d"]', 'BF'],
  ['owner within ["^b"]', 'B'],
  ['grade = "A"', 'A'],
  ['grade != "A"', 'BCDEFG'],
  ['contactemail = "ops@example.com"', 'A'],
  ['module exists', 'ABCDFG'],
  // Hash-keyed DNs: exact on both engines (MySQL's TEXT dn compares case-insensitively by itself).
  [`dn equals ${q(`CN=O'Brien "q", test`)}`, 'G'],
  [`dn equals ${q(`cn=o'brien "q", test`)}`, ''],
  [`dn != ${q(`CN=O'Brien "q", test`)}`, 'ABCDEF'],
  [`dn != ${q(`cn=o'brien "q", test`)}`, ALL],
  ['dn in ["CN=B", "CN=C", "CN=nope"]', 'BC'],
  ['dn not in ["CN=B", "CN=C"]', 'ADEFG'],
  [`dn contains "o'brien"`, 'G'],
  ['dn contains "🚀"', 'E'],
  ['dn contains "zoë"', 'E'],
  ['dn matches "^CN=web1\\\\."', 'A'],
  ['dn matches "^cn=web1"', ''],
  ['issuer = "CN=Test CA"', ALL],
  // Normalised values.
  [`serial = ${q(colonHex('1a2b3c'))}`, 'A'],
  ['serial = "0001A2B3C"', 'A'],
  [`id = ${q(idOf('B').toUpperCase())}`, 'B'],
  ['revocation.reason equals "KeyCompromise"', 'D'],
  // Dates.
  ['valid.until before 30d', 'BC'],
  ['valid.until before 30d and status is valid', 'B'],
  ['valid.until before -5d', 'C'],
  ['valid.from > now', 'E'],
  ['valid.from after -50d', 'BDEFG'],
  ['valid.until after "2026"', 'AE'],
  [`valid.until equals ${NOW - 10 * DAY}`, 'C'],
  ['valid.until equals "2025-06-05T12:00:00Z"', 'C'],
  ['valid.until = "2025-06-05T14:00:00+02:00"', 'C'],
  ['valid.until = "2025-06-05T12:00"', 'C'],
  ['valid.until in ["2025-06-05T12:00", "2025-09-23T12:00"]', 'CDFG'],
  ['valid.until before today', 'C'],
  ['revocation.date exists', 'D'],
  ['revocation.date not exists', 'ABCEFG'],
  ['revocation.date after -6d', 'D'],
  // Specials.
  ['status is valid', 'ABEFG'],
  ['status is expired', 'C'],
  ['status is revoked', 'D'],
  ['status is not valid', 'CD'],
  ['certificate is selfsigned', 'E'],
  ['certificate is trusted', 'E'],
  ['certificate is not trusted', 'ABCDFG'],
  ['certificate is discovered', 'EF'],
  ['trigger.results has failure', 'F'],
  ['trigger.results has no failure', 'ABCDEG'],
  // SANs: lower-cased side table, suffix / prefix / exact regexes through the indexed columns.
  ['san equals "WWW.EXAMPLE.COM"', 'A'],
  ['san equals "www.example.org"', 'F'],
  ['san = "web1.example.com"', 'A'],
  ['san matches "\\.example\\.com$"', 'ABCD'],
  ['san matches "^.*\\.example\\.com$"', 'ABCD'],
  ['san matches ".*\\.EXAMPLE\\.com$"', 'ABCD'],
  ['san matches "^www\\."', 'AF'],
  ['san matches "^WWW\\.example\\..*"', 'AF'],
  ['san matches "^api\\.example\\.com$"', 'B'],
  ['san matches "^web[0-9]\\."', 'AB'],
  ['san matches "example"', 'ABCDFG'],
  ['san matches "\\.org$|\\.net$"', 'FG'],
  ['san within ["^web[0-9]\\.", "^vpn\\."]', 'ABF'],
  ['san within ["\\.net$", "^old\\."]', 'CG'],
  ['san contains "CORP"', 'F'],
  ['san in ["g.example.net", "OLD.example.com"]', 'CG'],
  ['san exists', 'ABCDFG'],
  ['san not exists', 'E'],
  ['san != "www.example.com"', 'BCDEFG'],
  ['san not in ["www.example.com", "old.example.com"]', 'BDEFG'],
  ['not san contains "example"', 'E'],
  // Labels, metadata, facets.
  ['label.env = "prod"', 'AC'],
  ['label.env != "prod"', 'BDEFG'],
  ['label.env exists', 'ABC'],
  ['label.env not exists', 'DEFG'],
  ['label.ENV exists', ''],
  ['Label.env exists', 'ABC'],
  ['label."my key" = "x y"', 'F'],
  ['label.app contains "%"', 'G'],
  ['label.app contains "_"', 'G'],
  ['label.app contains "b_"', 'G'],
  ['label.app contains "b%"', ''],
  ['label.app equals "a%b_c"', 'G'],
  ['label.app matches "^a%b_"', 'G'],
  ['metadata.ticket exists', 'A'],
  ['metadata.site in ["paris", "lyon"]', 'F'],
  ['discoverydata.tlsport equals 8443', 'E'],
  ['discoverydata.tlsport = "443"', 'B'],
  ['discoverydata.tlsport > 100', 'BE'],
  ['discoverydata.tlsport < 50', 'EG'],
  ['discoverydata.tlsport before 10', 'E'],
  ['discoverydata.tlsport after 9', 'BEG'],
  ['discoverydata.tlsport in [9, 10]', 'EG'],
  ['discoverydata.tlsport exists', 'BEG'],
  // Boolean logic.
  ['(team = "web" or team = "net") and not (profile = "webserver")', 'F'],
  ['team = "web" and (owner = "alice" or owner = "bob")', 'AB'],
  ['!(status is valid) && profile == "webserver"', 'C'],
  ['TEAM EQUALS "web" AND OWNER = "bob"', 'B'],
  ['owner = "alice" or owner = "bob" and team = "sec"', 'AC'],
  ['not not profile = "webserver"', 'ABCG'],
  ['not (team = "web" or owner = "alice")', 'DEFG'],
  ['not (team = "web" and owner = "alice")', 'BCDEFG'],
  ['not (status is valid or certificate is trusted)', 'CD'],
];

t.test('each query selects exactly its rows, and its negation the others', async (t) => {
  for (const [query, expected] of table) {
    t.equal((await db.names(query)).join(''), expected, `${query || '(empty)'} → ${expected || '∅'}`);
    if (query === '') continue;
    const complement = [...ALL].filter((n) => !expected.includes(n)).join('');
    t.equal((await db.names(`not (${query})`)).join(''), complement, `not (${query}) → ${complement || '∅'}`);
  }
});

t.test('an aliased main table', async (t) => {
  for (const [query, expected] of [
    ['san matches "\\.example\\.com$" and label.env = "prod"', 'AC'],
    ['status is not valid', 'CD'],
    ['trigger.results has no failure and certificate is not trusted', 'ABCDG'],
    ['owner != "alice"', 'BDEFG'],
  ] as const) {
    const qb = db.knex('inv_certificates as c').select('c.id').where('c.tenant', TENANT);
    applyQuery(qb, parseQuery(query, L), L, { knex: db.knex, now: NOW, table: 'c' });
    const names = ((await qb) as { id: string }[]).map((r) => rows.find((row) => idOf(row.name) === r.id)!.name).sort();
    t.equal(names.join(''), expected, query);
  }
});

t.test('the same builder renders the same SQL each time (clone, count, page)', async (t) => {
  const qb = db.knex('inv_certificates').where('inv_certificates.tenant', TENANT);
  applyQuery(qb, parseQuery('san matches "\\.example\\.com$" or not label.env = "prod"', L), L, { knex: db.knex, now: NOW, table: 'inv_certificates' });
  const first = qb.clone().select('id').toSQL().sql;
  t.equal(qb.clone().select('id').toSQL().sql, first);
  const count = (await qb.clone().count({ n: '*' }).first()) as { n: number | string };
  t.equal(Number(count.n), 7);
  t.equal(((await qb.clone().select('id').limit(2)) as unknown[]).length, 2);
});

t.test('values are bound, never spliced', async (t) => {
  const qb = db.knex('inv_certificates').select('id');
  applyQuery(qb, parseQuery(`dn contains "x' OR 1=1 --" and label.a = "b'c" and san matches "^q'r\\\\." and owner in ["o'1", "o'2"]`, L), L, {
    knex: db.knex,
    now: NOW,
    table: 'inv_certificates',
  });
  const { sql, bindings } = qb.toSQL();
  for (const fragment of ['OR 1=1', "b'c", "q'r", "o'1", 'prod']) t.notOk(sql.includes(fragment), `${fragment} is not in the SQL text`);
  t.ok(bindings.includes("%x' or 1=1 --%"), 'contains value bound (lower-cased)');
  t.ok(bindings.includes("b'c"));
  t.ok(bindings.includes('o\'1') && bindings.includes('o\'2'));
});

t.test('trees built by hand', async (t) => {
  const at = { offset: 0 };
  const tree: QueryNode = { kind: 'compare', field: 'label.env', operator: 'equals', values: [{ kind: 'string', value: 'prod', ...at }], ...at };
  t.equal((await db.names(tree)).join(''), 'AC', 'field "label.env" without key');
  const keyed: QueryNode = { kind: 'compare', field: 'label', key: 'env', operator: 'exists', values: [], ...at };
  t.equal((await db.names(keyed)).join(''), 'ABC');
  t.equal((await db.names({ kind: 'not', child: { kind: 'all' } })).join(''), '', 'not all = nothing');
  t.equal((await db.names({ kind: 'or', children: [] })).join(''), '', 'empty or = nothing');
  t.equal((await db.names({ kind: 'and', children: [] })).join(''), ALL, 'empty and = everything');
  const bad: QueryNode[] = [
    { kind: 'compare', field: 'nope', operator: 'equals', values: [{ kind: 'string', value: 'x', ...at }], ...at },
    { kind: 'compare', field: 'label', operator: 'exists', values: [], ...at },
    { kind: 'compare', field: 'dn', operator: 'before', values: [{ kind: 'string', value: 'x', ...at }], ...at },
    { kind: 'compare', field: 'dn', operator: 'equals', values: [], ...at },
    { kind: 'compare', field: 'dn', operator: 'in', values: [], ...at },
    { kind: 'special', subject: 'status', verb: 'is', negated: false, value: 'toString', ...at },
    { kind: 'bogus' } as unknown as QueryNode,
    Array.from({ length: 10_000 }).reduce<QueryNode>((child) => ({ kind: 'not', child }), { kind: 'all' }),
  ];
  for (const node of bad) {
    await t.rejects(db.names(node), { code: 'HQL-001' }, node.kind);
  }
});

t.test('time: now, today and relative dates follow ctx.now', async (t) => {
  // 25 days later: B (+20d) has expired; the 30-day window reaches +55d.
  t.equal((await db.names('valid.until before 30d', { now: NOW + 25 * DAY })).join(''), 'BC');
  t.equal((await db.names('status is expired', { now: NOW + 25 * DAY })).join(''), 'BC');
  t.equal((await db.names('valid.from > now', { now: NOW + 11 * DAY })).join(''), '');
});

t.test('query too large: bound parameters over 30,000', async (t) => {
  const values = (n: number) => Array.from({ length: n }, (_, i) => `"v${i}"`).join(',');
  t.equal((await db.names(`owner in [${values(10_000)}, "bob"]`)).join(''), 'B', '10,000-element in');
  t.equal((await db.names(`dn in [${values(10_000)}, "CN=B"]`)).join(''), 'B', '10,000 DNs: 20,002 parameters (hash + value)');
  t.equal((await db.names(`san within [${Array.from({ length: 2000 }, (_, i) => `"^x${i}\\\\."`).join(',')}, "^api\\\\."]`)).join(''), 'B', '2,001 regexes');
  const wide = Array.from({ length: 3000 }, (_, i) => `owner = "o${i}"`).join(' or ') + ' or owner = "dave"';
  t.equal((await db.names(wide)).join(''), 'F', '3,001-term or (SQLite expression depth stays bounded)');
  const wideAnd = Array.from({ length: 3000 }, () => `owner != "x"`).join(' and ');
  t.equal((await db.names(wideAnd)).join(''), 'ABCDEFG', '3,000-term and');
  for (const query of [`dn in [${values(15_001)}]`, `owner in [${values(30_001)}]`, Array.from({ length: 30_001 }, () => 'team exists').join(' or ')]) {
    let error: unknown;
    try {
      await db.names(query);
    } catch (err) {
      error = err;
    }
    t.ok(error instanceof ProblemError && error.code === 'HQL-001' && /query too large/.test(error.message), `${query.slice(0, 30)}…: query too large`);
  }
});

t.test('another language: number and boolean columns, default tenant column', async (t) => {
  // A small table of the same database, to cover column types HCQL does not have.
  await db.knex.schema.createTable('q_items', (tb) => {
    tb.string('id', 24).primary();
    tb.string('tenant', 64).notNullable();
    tb.integer('port').nullable();
    tb.boolean('enabled').nullable();
    tb.string('name', 64).nullable();
  });
  t.teardown(() => db.knex.schema.dropTableIfExists('q_items'));
  await db.knex('q_items').insert([
    { id: idOf('A'), tenant: TENANT, port: 443, enabled: true, name: 'a' },
    { id: idOf('B'), tenant: TENANT, port: 80, enabled: false, name: 'b' },
    { id: idOf('C'), tenant: TENANT, port: null, enabled: null, name: null },
  ]);
  const language: QueryLanguage = {
    name: 'TEST',
    table: 'q_items',
    idColumn: 'id',
    tenantColumn: 'tenant',
    fields: [
      { name: 'port', type: 'number', storage: { kind: 'column', column: 'port' }, description: 'port' },
      { name: 'enabled', type: 'boolean', storage: { kind: 'column', column: 'enabled' }, description: 'flag' },
      { name: 'name', type: 'string', storage: { kind: 'column', column: 'name' }, description: 'name', operators: ['equals', 'exists'] },
    ],
    specials: [],
  };
  const cases: [string, string][] = [
    ['port = 443', 'A'],
    ['port > 100', 'A'],
    ['port < 100', 'B'],
    ['port != 443', 'BC'],
    ['port in [80, "443"]', 'AB'],
    ['port not exists', 'C'],
    ['enabled = true', 'A'],
    ['enabled = false', 'B'],
    ['enabled != true', 'BC'],
    ['enabled exists', 'AB'],
    ['name = "a"', 'A'],
  ];
  for (const [query, expected] of cases) t.equal((await db.names(query, { language })).join(''), expected, query);
  t.throws(() => parseQuery('name contains "a"', language), { code: 'HQL-001' }, 'operators listed by the field');
  t.throws(() => parseQuery('enabled = "maybe"', language), { code: 'HQL-001' });
  t.throws(() => parseQuery('port = now', language), { code: 'HQL-001' });
});
