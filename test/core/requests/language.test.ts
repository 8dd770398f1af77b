import t from 'tap';
import { applyQuery, parseQuery, queryDictionary } from '../../../core/query/index.js';
import { REQUEST_LANGUAGE, REQUEST_STATUSES, RequestStore, type NewRequest, type RequestObject, type RequestPatch } from '../../../core/requests/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';
import { queryProblem } from '../../helpers/query-problem.js';

/**
 * HRQL end to end: requests written through the RequestStore (its clock spreading registrations and
 * transitions over days), then each query compiled by the generic engine against the requests tables
 * and compared with the set its predicate selects from the tenant's requests as read back. Runs on
 * SQLite, and on MariaDB with TEST_DATABASE_URL.
 */
const TENANT = 'hrql-test';
const OTHER = 'hrql-other';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Noon UTC: `today` (00:00) falls exactly on the request registered 12 hours back.
const NOW = Date.UTC(2025, 2, 14, 12, 0, 0);
const C1 = '65f0a1b2c3d4e5f6a7b8c9d0';
const C2 = '65f0a1b2c3d4e5f6a7b8c9d1';
const C3 = '65f0a1b2c3d4e5f6a7b8c9d2';

type Input = Omit<NewRequest, 'tenant'> & { ago: number; tenant?: string; later?: { ago: number; patch: RequestPatch } };
const env = (value: string) => [{ key: 'env', value }];
const FIXTURE: Input[] = [
  {
    ago: 10 * DAY, module: 'webra', workflow: 'enroll', status: 'pending', profile: 'web-server', requester: 'alice', contact: 'alice@example.com', team: 'web',
    holderId: 'h-web-1', dn: 'CN=www.example.com,O=Acme', labels: [...env('prod'), { key: 'app', value: 'shop' }], metadata: [{ key: 'pki_connector', value: 'acme' }],
    later: { ago: 10 * DAY - HOUR, patch: { status: 'completed', approver: 'dave', certificateId: C1 } },
  },
  { ago: 9 * DAY, module: 'webra', workflow: 'enroll', status: 'pending', profile: 'web-server', requester: 'bob', team: 'web', holderId: 'h-web-1', expirationDate: NOW - 2 * DAY, labels: env('staging') },
  {
    ago: 8 * DAY, module: 'webra', workflow: 'renew', status: 'completed', profile: 'web-server', requester: 'alice', holderId: 'h-web-1', certificateId: C2, labels: env('prod'),
    metadata: [{ key: 'renewed_certificate_id', value: C1 }, { key: 'pki_connector', value: 'acme' }],
  },
  { ago: 6 * DAY, module: 'webra', workflow: 'revoke', status: 'completed', profile: 'vpn', requester: 'carol', certificateId: C3, contact: 'carol@example.com' },
  {
    ago: 5 * DAY, module: 'scep', workflow: 'enroll', status: 'pending', profile: 'device', requester: '', dn: 'CN=device-42', holderId: 'h-device', expirationDate: NOW + 5 * DAY,
    later: { ago: 4 * DAY, patch: { status: 'approved', approver: 'erin' } },
  },
  {
    ago: 4 * DAY, module: 'est', workflow: 'enroll', status: 'pending', profile: 'device', requester: 'svc-est', labels: env('prod'), metadata: [{ key: 'ticket', value: 'CHG-1' }],
    later: { ago: 3 * DAY, patch: { status: 'denied', approver: 'Dave', approverComment: 'wrong CN' } },
  },
  {
    ago: 3 * DAY, module: 'webra', workflow: 'update', status: 'pending', profile: 'vpn', requester: 'bob', team: 'net', labels: [{ key: 'app', value: 'a%b_c' }],
    later: { ago: 2 * DAY, patch: { status: 'canceled' } },
  },
  // An empty label value is still a label: `label.env exists` holds (an empty column counts as absent).
  { ago: 36 * HOUR, module: 'webra', workflow: 'import', status: 'completed', requester: 'alice', team: 'net', labels: env(''), metadata: [{ key: 'ticket', value: 'CHG-2' }] },
  { ago: 13 * HOUR, module: 'webra', workflow: 'recover', status: 'pending', profile: 'vpn', requester: 'Alice', holderId: 'h-vpn', expirationDate: NOW + HOUR },
  // Registered at `today`; expires exactly now, which counts as expired.
  { ago: 12 * HOUR, module: 'webra', workflow: 'migrate', status: 'pending', profile: 'web-server', requester: 'dave', expirationDate: NOW },
  { ago: 2 * HOUR, module: 'acme', workflow: 'enroll', status: 'completed', profile: 'web-server', requester: 'acme-client', holderId: 'h-vpn', contact: 'ops@example.org', labels: env('prod') },
  {
    ago: 30 * MINUTE, module: 'webra', workflow: 'enroll', status: 'pending', profile: 'vpn', requester: 'carol', team: 'web', contact: 'carol@example.com', dryRun: true,
    labels: [{ key: 'owner group', value: 'net ops' }],
  },
  // Another tenant, matching many of the queries below: never in the answers.
  { ago: HOUR, tenant: OTHER, module: 'webra', workflow: 'enroll', status: 'pending', profile: 'web-server', requester: 'alice', holderId: 'h-web-1', labels: env('prod') },
  { ago: 2 * DAY, tenant: OTHER, module: 'webra', workflow: 'revoke', status: 'completed', requester: 'bob', certificateId: C1 },
  { ago: 3 * DAY, tenant: OTHER, module: 'scep', workflow: 'enroll', status: 'pending', expirationDate: NOW - DAY, metadata: [{ key: 'ticket', value: 'CHG-1' }] },
];

const present = (v: string | null | undefined): boolean => v !== undefined && v !== null && v !== '';
const lowerHas = (v: string | null | undefined, part: string): boolean => typeof v === 'string' && v.toLowerCase().includes(part);
const test = (v: string | null | undefined, re: RegExp): boolean => typeof v === 'string' && re.test(v);
const valuesOf = (list: { key: string; value: string }[], key: string): string[] => list.filter((p) => p.key === key).map((p) => p.value);
const label = (r: RequestObject, key: string): string[] => valuesOf(r.labels, key);
const meta = (r: RequestObject, key: string): string[] => valuesOf(r.metadata, key);
const expired = (r: RequestObject): boolean => r.expirationDate !== undefined && r.expirationDate <= NOW;

t.test('HRQL over the requests tables', async (t) => {
  const kernel = await bootKernel(t);
  const { knex, engine } = kernel.db;
  t.equal(engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');

  let clock = 0;
  const store = new RequestStore(knex, () => clock);
  const ids: string[] = [];
  for (const { ago, tenant, later, ...input } of FIXTURE) {
    clock = NOW - ago;
    const { request } = await store.insert({ ...input, tenant: tenant ?? TENANT });
    if (later) {
      clock = NOW - later.ago;
      t.equal((await store.update(tenant ?? TENANT, request._id, 1, later.patch)).outcome, 'updated');
    }
    if (!tenant) ids.push(request._id);
  }

  // The tenant's requests as the store reads them back: what the predicates look at.
  const listed = (await knex('requests').where('tenant', TENANT).pluck('id')) as string[];
  t.same(listed.sort(), [...ids].sort(), 'the tenant holds exactly the inserted requests');
  const rows: RequestObject[] = [];
  for (const id of ids) rows.push((await store.get(TENANT, id))!.request);
  t.same(
    rows.map((r) => r.registrationDate),
    FIXTURE.filter((f) => !f.tenant).map((f) => NOW - f.ago),
    'dates come from the store clock',
  );

  const run = async (query: string): Promise<string[]> => {
    const qb = knex('requests').where('requests.tenant', TENANT);
    applyQuery(qb, parseQuery(query, REQUEST_LANGUAGE), REQUEST_LANGUAGE, { knex, now: NOW, table: 'requests', tenant: TENANT });
    return ((await qb.pluck('requests.id')) as string[]).sort();
  };
  const expected = (predicate: (r: RequestObject) => boolean): string[] => rows.filter(predicate).map((r) => r._id).sort();
  const at = (i: number) => rows[i]!;
  const TODAY = Date.UTC(2025, 2, 14);

  const CASES: [string, (r: RequestObject) => boolean][] = [
    ['', () => true],
    ['module = "webra"', (r) => r.module === 'webra'],
    ['module != "webra"', (r) => r.module !== 'webra'],
    ['module in ["scep", "est"]', (r) => r.module === 'scep' || r.module === 'est'],
    ['module not in ("webra")', (r) => r.module !== 'webra'],
    ['workflow equals "enroll"', (r) => r.workflow === 'enroll'],
    ['workflow in ["renew", "revoke"]', (r) => r.workflow === 'renew' || r.workflow === 'revoke'],
    ['status = "pending"', (r) => r.status === 'pending'],
    ['status = "COMPLETED"', (r) => r.status === 'completed'],
    ['status != "completed"', (r) => r.status !== 'completed'],
    ['status not in ["pending", "approved"]', (r) => r.status !== 'pending' && r.status !== 'approved'],
    ['profile = "web-server"', (r) => r.profile === 'web-server'],
    ['profile exists', (r) => present(r.profile)],
    ['profile not exists', (r) => !present(r.profile)],
    ['profile matches "^(vpn|device)$"', (r) => test(r.profile, /^(vpn|device)$/)],
    ['requester = "alice"', (r) => r.requester === 'alice'],
    ['requester contains "ALI"', (r) => lowerHas(r.requester, 'ali')],
    ['requester matches "^[a-c]"', (r) => test(r.requester, /^[a-c]/)],
    ['requester within ["^svc-", "-client$"]', (r) => test(r.requester, /^svc-|-client$/)],
    ['requester exists', (r) => present(r.requester)],
    ['requester != "alice"', (r) => r.requester !== 'alice'],
    ['approver = "dave"', (r) => r.approver === 'dave'],
    ['approver not exists', (r) => !present(r.approver)],
    [String.raw`contact matches "@example\\.com$"`, (r) => test(r.contact, /@example\.com$/)],
    ['contact not exists', (r) => !present(r.contact)],
    ['team = "web"', (r) => r.team === 'web'],
    ['team != "web"', (r) => r.team !== 'web'],
    ['holderid = "h-web-1"', (r) => r.holderId === 'h-web-1'],
    ['holderid equals "h-web-1" and workflow equals "enroll"', (r) => r.holderId === 'h-web-1' && r.workflow === 'enroll'],
    ['holderid in ["h-vpn", "h-device"]', (r) => r.holderId === 'h-vpn' || r.holderId === 'h-device'],
    [`certificateid = "${C1.toUpperCase()}"`, (r) => r.certificateId === C1],
    ['certificateid exists', (r) => present(r.certificateId)],
    ['dn contains "example"', (r) => lowerHas(r.dn, 'example')],
    ['dn = "CN=device-42"', (r) => r.dn === 'CN=device-42'],
    ['label.env = "prod"', (r) => label(r, 'env').includes('prod')],
    ['Label.env = "prod"', (r) => label(r, 'env').includes('prod')],
    ['label.env != "prod"', (r) => !label(r, 'env').includes('prod')],
    ['label.env in ["prod", "staging"]', (r) => label(r, 'env').some((v) => v === 'prod' || v === 'staging')],
    ['label.env exists', (r) => label(r, 'env').length > 0],
    ['label.env not exists', (r) => label(r, 'env').length === 0],
    ['label.env matches "^st"', (r) => label(r, 'env').some((v) => v.startsWith('st'))],
    ['label.app contains "%"', (r) => label(r, 'app').some((v) => v.includes('%'))],
    ['label.app equals "a%b_c"', (r) => label(r, 'app').includes('a%b_c')],
    ['label."owner group" = "net ops"', (r) => label(r, 'owner group').includes('net ops')],
    ['metadata.pki_connector = "acme"', (r) => meta(r, 'pki_connector').includes('acme')],
    [`metadata.renewed_certificate_id = "${C1}"`, (r) => meta(r, 'renewed_certificate_id').includes(C1)],
    ['metadata.ticket exists', (r) => meta(r, 'ticket').length > 0],
    ['not metadata.ticket exists', (r) => meta(r, 'ticket').length === 0],
    ['metadata.ticket contains "chg"', (r) => meta(r, 'ticket').some((v) => v.toLowerCase().includes('chg'))],
    ['registration.date after -1d', (r) => r.registrationDate > NOW - DAY],
    ['registration.date before -5d', (r) => r.registrationDate < NOW - 5 * DAY],
    ['registration.date > today', (r) => r.registrationDate > TODAY],
    ['registration.date = today', (r) => r.registrationDate === TODAY],
    ['registration.date > "2025-03-10"', (r) => r.registrationDate > Date.UTC(2025, 2, 10)],
    ['registration.date < "2025-03-08T12:00:00Z" and registration.date > "2025"', (r) => r.registrationDate < NOW - 6 * DAY && r.registrationDate > Date.UTC(2025, 0, 1)],
    [`registration.date = ${NOW - 6 * DAY}`, (r) => r.registrationDate === NOW - 6 * DAY],
    ['modification.date after -3d', (r) => r.lastModificationDate > NOW - 3 * DAY],
    ['modification.date < -72h', (r) => r.lastModificationDate < NOW - 3 * DAY],
    ['expiration.date exists', (r) => r.expirationDate !== undefined],
    ['expiration.date not exists', (r) => r.expirationDate === undefined],
    ['expiration.date before now', (r) => r.expirationDate !== undefined && r.expirationDate < NOW],
    ['expiration.date after 30m', (r) => r.expirationDate !== undefined && r.expirationDate > NOW + 30 * MINUTE],
    ['request is expired', expired],
    ['request is not expired', (r) => !expired(r)],
    ['request is valid', (r) => !expired(r)],
    ['request is not valid', expired],
    ['request is valid and status = "pending"', (r) => !expired(r) && r.status === 'pending'],
    ['status = "pending" or status = "approved"', (r) => r.status === 'pending' || r.status === 'approved'],
    ['not (module = "webra")', (r) => r.module !== 'webra'],
    ['!(status = "completed" || label.env = "prod")', (r) => r.status !== 'completed' && !label(r, 'env').includes('prod')],
    ['(workflow = "enroll" or workflow = "renew") and not team exists', (r) => (r.workflow === 'enroll' || r.workflow === 'renew') && !present(r.team)],
    ['status = "completed" & (approver exists | metadata.ticket exists)', (r) => r.status === 'completed' && (present(r.approver) || meta(r, 'ticket').length > 0)],
    ['not (request is expired or profile = "vpn")', (r) => !expired(r) && r.profile !== 'vpn'],
    [`id = "${at(3)._id.toUpperCase()}"`, (r) => r._id === at(3)._id],
    [`id in ["${at(0)._id}", "${at(7)._id}"]`, (r) => r._id === at(0)._id || r._id === at(7)._id],
    [`id not in ["${at(1)._id}"] and status = "pending"`, (r) => r._id !== at(1)._id && r.status === 'pending'],
  ];

  for (const [query, predicate] of CASES) {
    const want = expected(predicate);
    t.same(await run(query), want, `${query || '(empty)'} → ${want.length}`);
  }
  const discriminating = CASES.filter(([, p]) => expected(p).length > 0 && expected(p).length < rows.length);
  t.ok(discriminating.length >= 70, `${discriminating.length} queries select a proper, non-empty subset`);

  t.test('the tenant narrows every query', async (t) => {
    const everywhere = await knex('requests').modify((qb) => applyQuery(qb, parseQuery('holderid = "h-web-1"', REQUEST_LANGUAGE), REQUEST_LANGUAGE, { knex, now: NOW, table: 'requests' })).pluck('requests.id');
    t.equal(everywhere.length, 4, 'without the tenant, the other tenant’s request matches too');
    t.equal((await run('holderid = "h-web-1"')).length, 3);
  });

  t.test('string equality compares exactly', async (t) => {
    // The NO PAD binary collation of migration 0008 on MySQL/MariaDB, as SQLite compares.
    t.same(await run('requester = "ALICE"'), [], 'case matters');
    t.same(await run('requester = "alice "'), [], 'trailing spaces matter');
    t.same(await run('label.env in ["PROD", "prod "]'), [], 'side values too');
    t.same(await run('dn = "cn=device-42"'), [], 'text columns too');
  });

  t.test('errors', async (t) => {
    const problem = queryProblem(knex, REQUEST_LANGUAGE, NOW);
    const unknown = problem('requestor = "alice"');
    t.equal(unknown.code, 'HQL-001', 'unknown field');
    t.match(unknown.message, /unknown field "requestor" \(did you mean "requester"/);
    t.match(unknown.extra, { position: 0 });
    for (const query of ['status =', 'workflow equals "enroll" and', '(status = "pending"', 'holderid equals h-web-1', 'status = "pending" status = "denied"']) {
      t.match(problem(query), { code: 'HQL-001', message: /expected/ }, `syntax: ${query}`);
    }
    t.match(problem('status = "processing"'), { code: 'HQL-001', message: /"processing" is not a value of status/ }, 'status is a closed set');
    t.match(problem('label = "prod"'), { code: 'HQL-001', message: /label takes a key/ });
    t.match(problem('certificate.id = "x"'), { code: 'HQL-001', message: /unknown field "certificate\.id"/ });
    t.match(problem('san = "www.example.com"'), { code: 'HQL-001', message: /unknown field "san"/ }, 'HCQL fields are not HRQL’s');
    t.match(problem('registration.date > "yesterday"'), { code: 'HQL-001', message: /is not a date/ });
    t.match(problem('expiration.date contains "2025"'), { code: 'HQL-001', message: /expiration\.date does not take "contains"/ });
    t.match(problem('request is revoked'), { code: 'HQL-001', message: /"revoked" is not a value of "request is"/ });
    t.match(problem('status is valid'), { code: 'HQL-001', message: /is not a condition of HRQL \(accepted: "request is"\)/ });
  });

  t.test('dictionary', async (t) => {
    const dictionary = queryDictionary(REQUEST_LANGUAGE);
    t.same(
      dictionary.map((e) => e.name),
      [
        'id', 'module', 'workflow', 'status', 'profile', 'requester', 'approver', 'contact', 'team', 'holderid', 'certificateid', 'dn',
        'label', 'metadata', 'registration.date', 'modification.date', 'expiration.date', 'request is',
      ],
      'every field, then the special',
    );
    t.match(dictionary.find((e) => e.name === 'status'), { kind: 'field', type: 'string', property: 'status', groupable: true, values: [...REQUEST_STATUSES] });
    t.match(dictionary.find((e) => e.name === 'label'), { parametric: true, property: 'labels', groupable: true });
    t.match(dictionary.find((e) => e.name === 'modification.date'), { type: 'date', property: 'lastModificationDate', sortable: true, operators: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'] });
    t.match(dictionary.find((e) => e.name === 'holderid'), { property: 'holderId', sortable: true, groupable: true });
    t.match(dictionary.find((e) => e.name === 'id'), { property: '_id', sortable: true });
    t.notOk(dictionary.find((e) => e.name === 'id' && 'groupable' in e), 'ids are not grouped');
    t.same(dictionary.find((e) => e.name === 'request is'), {
      kind: 'special',
      name: 'request is',
      subject: 'request',
      verb: 'is',
      negation: 'not',
      values: ['valid', 'expired'],
      description: REQUEST_LANGUAGE.specials[0]!.description,
    });
    // Every property is a key of the request object (§2.5).
    const keys = Object.keys(rows[0]!).concat('_id', 'expirationDate');
    for (const e of dictionary) if (e.kind === 'field') t.ok(keys.includes(e.property!), `${e.name} → ${e.property}`);
  });
});
