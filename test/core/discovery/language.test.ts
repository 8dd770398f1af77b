import t from 'tap';
import { DISCOVERY_EVENT_LANGUAGE, DISCOVERY_EVENT_STATUSES, DiscoveryEventStore, discoveryEventFromRow, type DiscoveryEventInput, type DiscoveryEventOrigin, type StoredDiscoveryEvent } from '../../../core/discovery/index.js';
import { applyQuery, parseQuery, queryDictionary } from '../../../core/query/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';
import { queryProblem } from '../../helpers/query-problem.js';

/**
 * HDQL end to end: discovery events appended through the DiscoveryEventStore (its clock spreading them
 * over days), then each query compiled by the generic engine against the real table and compared with
 * the set its predicate selects from the tenant's rows as read back. SQLite, and MariaDB with
 * TEST_DATABASE_URL.
 */
const TENANT = 'hdql-test';
const OTHER = 'hdql-other';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Noon UTC, so `today` (00:00) falls exactly on the event 12 hours back: a boundary to check.
const NOW = Date.UTC(2025, 2, 14, 12, 0, 0);
const C1 = 'aa00000000000000000000c1';
const C2 = 'aa00000000000000000000c2';
const C3 = 'aa00000000000000000000c3';

type Input = DiscoveryEventInput & { ago: number; tenant?: string; origin?: DiscoveryEventOrigin };
const agent1 = { clientVersion: '1.2.0', clientIp: '192.0.2.10', clientId: 'agent-1' };
const FIXTURE: Input[] = [
  { ago: 10 * DAY, campaign: 'dc-east', sessionId: 's-1', code: 'LOCALSCAN', status: 'success', hostname: 'web1.example.com', ip: '10.0.0.1', port: 443, source: '/etc/ssl/web1.pem', origin: { ...agent1, certificateId: C1 } },
  { ago: 9 * DAY, campaign: 'dc-east', sessionId: 's-1', code: 'NETSCAN', status: 'failure', errorCode: 'HCL-NETSCAN-001', errorMessage: 'Connection refused', hostname: 'web2.example.com', ip: '10.0.0.2', port: 8443, origin: agent1 },
  { ago: 8 * DAY, campaign: 'dc-east', sessionId: 's-1', code: 'NETSCAN', status: 'warning', errorCode: 'HCL-NETSCAN-002', errorMessage: 'Certificate expires soon', hostname: 'mail.example.org', ip: '10.0.0.3', port: 25, origin: { ...agent1, certificateId: C2 } },
  { ago: 7 * DAY, campaign: 'dc-east', sessionId: 's-1', code: 'SESSION-END', status: 'success', origin: agent1 },
  { ago: 5 * DAY, campaign: 'dc-west', sessionId: 's-2', code: 'LOCALIMPORT', status: 'success', hostname: 'db.internal', source: 'C:\\certs\\db.pfx', origin: { clientVersion: '1.1.9', clientId: 'agent-2' } },
  { ago: 4 * DAY, campaign: 'dc-west', sessionId: 's-2', code: 'NETIMPORT', status: 'failure', errorCode: 'HCL-NETIMPORT-DCC-001', errorMessage: 'Decode error: unexpected EOF', ip: '2001:db8::1', port: 636, origin: { clientId: 'agent-2' } },
  { ago: 3 * DAY, campaign: 'dc-west', sessionId: 's-2', code: 'SESSION-END', status: 'warning', origin: { clientId: 'agent-2' } },
  // No session (Ansible sends none); an empty host name counts as absent; port 0 exists.
  { ago: 36 * HOUR, campaign: 'lab', code: 'IMPORTSCAN', status: 'success', hostname: '', ip: '192.168.1.5', port: 0 },
  { ago: 20 * HOUR, campaign: 'lab', sessionId: 's-3', code: 'EST', status: 'failure', errorCode: 'EST-401', errorMessage: 'Unauthorized', port: 65535, origin: { clientIp: '198.51.100.7' } },
  { ago: 12 * HOUR, campaign: 'lab', sessionId: 's-3', code: 'ACME', status: 'success', hostname: 'acme.example.com', port: 443, origin: { certificateId: C3 } },
  { ago: 2 * HOUR, campaign: 'dc-east', sessionId: 's-4', code: 'WEBRA', status: 'success', hostname: 'Web1.Example.com', port: 443, origin: { clientVersion: '2.0.0', clientId: 'agent-1' } },
  { ago: 30 * MINUTE, campaign: 'dc-east', sessionId: 's-4', code: 'SESSION-END', status: 'failure', errorMessage: 'Session aborted', origin: { clientVersion: '2.0.0', clientId: 'agent-1' } },
  // Another tenant, matching many of the queries below: never in the answers.
  { ago: HOUR, tenant: OTHER, campaign: 'dc-east', sessionId: 's-1', code: 'SESSION-END', status: 'success', hostname: 'web1.example.com', port: 443 },
  { ago: 2 * HOUR, tenant: OTHER, campaign: 'lab', code: 'NETSCAN', status: 'failure', port: 8443, origin: agent1 },
  { ago: 3 * DAY, tenant: OTHER, campaign: 'dc-west', code: 'EST', status: 'warning', errorCode: 'EST-401', origin: { certificateId: C1 } },
];

type Row = StoredDiscoveryEvent;
const present = (v: string | null): v is string => v !== null && v !== '';
const lowerHas = (v: string | null, part: string): boolean => v !== null && v.toLowerCase().includes(part);
const oneOf = (v: string | number | null, list: (string | number)[]): boolean => v !== null && list.includes(v);

t.test('HDQL over the discovery_events table', async (t) => {
  const kernel = await bootKernel(t);
  const { knex, engine } = kernel.db;
  t.equal(engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');

  let clock = 0;
  const store = new DiscoveryEventStore(knex, () => clock);
  const appended: StoredDiscoveryEvent[] = [];
  for (const { ago, tenant, origin, ...input } of FIXTURE) {
    clock = NOW - ago;
    const [event] = await store.append(tenant ?? TENANT, input, origin);
    if (!tenant) appended.push(event!);
  }

  const rows: Row[] = (await knex('discovery_events').where('tenant', TENANT)).map(discoveryEventFromRow);
  const byId = (a: Row, b: Row) => a._id.localeCompare(b._id);
  t.same([...rows].sort(byId), [...appended].sort(byId), 'the tenant holds exactly the appended events');
  t.same(
    rows.map((r) => r.timestamp).sort((a, b) => a - b),
    FIXTURE.filter((f) => !f.tenant).map((f) => NOW - f.ago),
    'timestamps come from the store clock',
  );

  const table = DISCOVERY_EVENT_LANGUAGE.table;
  const run = async (query: string): Promise<string[]> => {
    const qb = knex(table).where(`${table}.tenant`, TENANT);
    applyQuery(qb, parseQuery(query, DISCOVERY_EVENT_LANGUAGE), DISCOVERY_EVENT_LANGUAGE, { knex, now: NOW, table, tenant: TENANT });
    return ((await qb.pluck(`${table}.id`)) as string[]).sort();
  };
  const expected = (predicate: (r: Row) => boolean): string[] => rows.filter(predicate).map((r) => r._id).sort();

  const at = (i: number) => appended[i]!;
  const CASES: [string, (r: Row) => boolean][] = [
    ['', () => true],
    // The Go client's own search (client-compat §4).
    ['code = "SESSION-END"', (r) => r.code === 'SESSION-END'],
    ['code equals "NETSCAN"', (r) => r.code === 'NETSCAN'],
    ['code != "SESSION-END"', (r) => r.code !== 'SESSION-END'],
    ['code in ["EST", "ACME"]', (r) => oneOf(r.code, ['EST', 'ACME'])],
    ['code not in ("SESSION-END", "NETSCAN")', (r) => !oneOf(r.code, ['SESSION-END', 'NETSCAN'])],
    ['code matches "IMPORT$"', (r) => /IMPORT$/.test(r.code)],
    ['code within ["^NET", "^LOCAL"]', (r) => /^NET|^LOCAL/.test(r.code)],
    ['code contains "import"', (r) => lowerHas(r.code, 'import')],
    ['campaign = "dc-east"', (r) => r.campaign === 'dc-east'],
    ['campaign in ("dc-west", "lab")', (r) => oneOf(r.campaign, ['dc-west', 'lab'])],
    ['campaign contains "DC-"', (r) => lowerHas(r.campaign, 'dc-')],
    ['sessionid = "s-1"', (r) => r.sessionId === 's-1'],
    ['SessionId = "s-2"', (r) => r.sessionId === 's-2'],
    ['sessionid not exists', (r) => !present(r.sessionId)],
    ['sessionid != "s-1"', (r) => r.sessionId !== 's-1'],
    ['status = "failure"', (r) => r.status === 'failure'],
    ['status = "WARNING"', (r) => r.status === 'warning'],
    ['status not in ["success"]', (r) => r.status !== 'success'],
    ['errorcode exists', (r) => present(r.errorCode)],
    ['errorcode matches "^HCL-NET"', (r) => r.errorCode !== null && /^HCL-NET/.test(r.errorCode)],
    ['errorcode = "HCL-NETIMPORT-DCC-001"', (r) => r.errorCode === 'HCL-NETIMPORT-DCC-001'],
    ['errormessage contains "REFUSED"', (r) => lowerHas(r.errorMessage, 'refused')],
    ['errormessage matches "^Decode error"', (r) => r.errorMessage !== null && /^Decode error/.test(r.errorMessage)],
    ['errormessage not exists', (r) => !present(r.errorMessage)],
    ['hostname = "web1.example.com"', (r) => r.hostname === 'web1.example.com'],
    ['hostname contains "example"', (r) => lowerHas(r.hostname, 'example')],
    ['hostname matches "\\.example\\.com$"', (r) => r.hostname !== null && /\.example\.com$/.test(r.hostname)],
    ['hostname exists', (r) => present(r.hostname)],
    ['hostname not exists', (r) => !present(r.hostname)],
    ['ip = "10.0.0.2"', (r) => r.ip === '10.0.0.2'],
    ['ip matches "^10\\."', (r) => r.ip !== null && /^10\./.test(r.ip)],
    ['ip contains "::"', (r) => lowerHas(r.ip, '::')],
    ['ip in ["10.0.0.1", "2001:db8::1"]', (r) => oneOf(r.ip, ['10.0.0.1', '2001:db8::1'])],
    ['port equals 443', (r) => r.port === 443],
    ['port = "443"', (r) => r.port === 443],
    ['port != 443', (r) => r.port !== 443],
    ['port > 1024', (r) => r.port !== null && r.port > 1024],
    ['port < 443', (r) => r.port !== null && r.port < 443],
    ['port after 600 and port before 65535', (r) => r.port !== null && r.port > 600 && r.port < 65535],
    ['port in [25, 636]', (r) => oneOf(r.port, [25, 636])],
    ['port not in (443, 8443)', (r) => !oneOf(r.port, [443, 8443])],
    ['port = 0', (r) => r.port === 0],
    ['port exists', (r) => r.port !== null],
    ['port not exists', (r) => r.port === null],
    ['source contains "certs"', (r) => lowerHas(r.source, 'certs')],
    ['source matches "^/etc/"', (r) => r.source !== null && r.source.startsWith('/etc/')],
    ['source exists', (r) => present(r.source)],
    ['timestamp after -1d', (r) => r.timestamp > NOW - DAY],
    ['date after -1d', (r) => r.timestamp > NOW - DAY],
    ['date > -36h', (r) => r.timestamp > NOW - 36 * HOUR],
    ['date before -5d', (r) => r.timestamp < NOW - 5 * DAY],
    ['date after today', (r) => r.timestamp > Date.UTC(2025, 2, 14)],
    ['date before today', (r) => r.timestamp < Date.UTC(2025, 2, 14)],
    ['date > "2025-03-10"', (r) => r.timestamp > Date.UTC(2025, 2, 10)],
    ['date < "2025-03-07T12:00:00Z" and date > "2025-03-04T12:00:00Z"', (r) => r.timestamp < NOW - 7 * DAY && r.timestamp > NOW - 10 * DAY],
    [`date = ${NOW - 7 * DAY}`, (r) => r.timestamp === NOW - 7 * DAY],
    [`date in [${NOW - 9 * DAY}, ${NOW - 12 * HOUR}]`, (r) => oneOf(r.timestamp, [NOW - 9 * DAY, NOW - 12 * HOUR])],
    ['date before now', () => true],
    ['client.version = "1.2.0"', (r) => r.clientVersion === '1.2.0'],
    ['client.version matches "^2\\."', (r) => r.clientVersion !== null && /^2\./.test(r.clientVersion)],
    ['client.ip = "192.0.2.10"', (r) => r.clientIp === '192.0.2.10'],
    ['client.ip not exists', (r) => !present(r.clientIp)],
    ['client.id in ["agent-1", "agent-2"]', (r) => oneOf(r.clientId, ['agent-1', 'agent-2'])],
    ['client.id not exists', (r) => !present(r.clientId)],
    ['certificate.id exists', (r) => present(r.certificateId)],
    [`certificate.id = "${C1.toUpperCase()}"`, (r) => r.certificateId === C1],
    [`id = "${at(3)._id.toUpperCase()}"`, (r) => r._id === at(3)._id],
    [`id in ["${at(0)._id}", "${at(7)._id}"]`, (r) => r._id === at(0)._id || r._id === at(7)._id],
    ['not (campaign = "dc-east")', (r) => r.campaign !== 'dc-east'],
    ['!(status = "success" || status = "warning")', (r) => r.status === 'failure'],
    ['not port exists or port < 100', (r) => r.port === null || r.port < 100],
    ['campaign = "dc-east" and (code = "NETSCAN" or port = 443)', (r) => r.campaign === 'dc-east' && (r.code === 'NETSCAN' || r.port === 443)],
    // `and` binds tighter than `or`.
    ['campaign = "lab" or port = 443 && status = "success"', (r) => r.campaign === 'lab' || (r.port === 443 && r.status === 'success')],
    ['(sessionid = "s-1" | sessionid = "s-2") & not status = "success"', (r) => oneOf(r.sessionId, ['s-1', 's-2']) && r.status !== 'success'],
    ['code = "SESSION-END" and date > -1d', (r) => r.code === 'SESSION-END' && r.timestamp > NOW - DAY],
    ['not (errorcode exists or (campaign = "lab" and date after -1d))', (r) => !(present(r.errorCode) || (r.campaign === 'lab' && r.timestamp > NOW - DAY))],
  ];

  for (const [query, predicate] of CASES) {
    const want = expected(predicate);
    t.same(await run(query), want, `${query || '(empty)'} → ${want.length}`);
  }
  const discriminating = CASES.filter(([, p]) => expected(p).length > 0 && expected(p).length < rows.length);
  t.ok(discriminating.length >= 60, `${discriminating.length} of ${CASES.length} queries select a proper, non-empty subset`);

  t.test('the tenant narrows every query', async (t) => {
    const everywhere = await knex(table)
      .modify((qb) => applyQuery(qb, parseQuery('code = "SESSION-END"', DISCOVERY_EVENT_LANGUAGE), DISCOVERY_EVENT_LANGUAGE, { knex, now: NOW, table }))
      .pluck(`${table}.id`);
    t.equal(everywhere.length, 4, 'without the tenant, the other tenant’s event matches too');
    t.equal((await run('code = "SESSION-END"')).length, 3);
  });

  t.test('string equality compares exactly', async (t) => {
    // Migration 0009 gives the columns a NO PAD binary collation on MariaDB, so this holds there too.
    t.same(await run('code = "session-end"'), [], 'case matters');
    t.same(await run('campaign = "DC-EAST"'), [], 'case matters in campaigns');
    t.same(await run('hostname = "web1.example.com "'), [], 'trailing spaces matter');
    t.same(await run('campaign in ["LAB", "lab "]'), [], 'in lists too');
    t.same(await run('hostname = "Web1.Example.com"'), expected((r) => r.hostname === 'Web1.Example.com'), 'the exact value matches');
  });

  t.test('errors', async (t) => {
    const problem = queryProblem(knex, DISCOVERY_EVENT_LANGUAGE, NOW);
    for (const bad of ['code = ', 'code = "SESSION-END" and', 'port equals', '(code = "EST"', 'code "EST"', 'port in [443', 'code = "unterminated']) {
      t.match(problem(bad), { code: 'HQL-001' }, `syntax: ${bad}`);
    }
    const unknown = problem('session = "s-1"');
    t.equal(unknown.code, 'HQL-001', 'unknown field');
    t.match(unknown.message, /unknown field "session" \(did you mean "sessionid"/);
    t.match(problem('timestampx > -1d'), { code: 'HQL-001', message: /unknown field "timestampx" \(did you mean "timestamp"/ }, 'a misspelt field names the close ones');
    t.match(problem('client = "x"'), { code: 'HQL-001', message: /unknown field "client"/ });
    t.match(problem('status = "ok"'), { code: 'HQL-001', message: /"ok" is not a value of status/ }, 'status is a closed set');
    t.match(problem('port contains "44"'), { code: 'HQL-001', message: /port does not take "contains"/ });
    t.match(problem('port > "many"'), { code: 'HQL-001', message: /is not a number/ });
    t.match(problem('date > "yesterday"'), { code: 'HQL-001', message: /is not a date/ });
    t.match(problem('status is valid'), { code: 'HQL-001', message: /is not a condition of HDQL \(accepted: none\)/ }, 'no specials');
  });

  t.test('dictionary', async (t) => {
    const dictionary = queryDictionary(DISCOVERY_EVENT_LANGUAGE);
    t.same(
      dictionary.map((e) => e.name),
      ['id', 'campaign', 'sessionid', 'code', 'status', 'errorcode', 'errormessage', 'hostname', 'ip', 'port', 'source', 'timestamp', 'date', 'client.version', 'client.ip', 'client.id', 'certificate.id'],
      'every field, no special',
    );
    t.ok(dictionary.every((e) => e.kind === 'field'));
    const properties = dictionary.map((e) => (e.kind === 'field' ? e.property : undefined)).sort();
    t.same([...new Set(properties)], Object.keys(at(0)).sort(), 'a field for each key of the stored event (timestamp twice: timestamp and date)');
    t.match(dictionary.find((e) => e.name === 'status'), { type: 'string', property: 'status', groupable: true, values: [...DISCOVERY_EVENT_STATUSES] });
    t.match(dictionary.find((e) => e.name === 'port'), { type: 'number', property: 'port', sortable: true, groupable: true, operators: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'] });
    t.match(dictionary.find((e) => e.name === 'date'), { type: 'date', property: 'timestamp', sortable: true });
    t.match(dictionary.find((e) => e.name === 'id'), { property: '_id', sortable: true });
    const message = dictionary.find((e) => e.name === 'errormessage');
    t.notOk(message && 'sortable' in message, 'error messages are not sorted by');
    t.notOk(message && 'groupable' in message, 'nor grouped by');
  });
});
