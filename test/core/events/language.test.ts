import t from 'tap';
import { EVENT_LANGUAGE, EVENT_STATUSES } from '../../../core/events/language.js';
import { EventStore, type NewEventInput, type StoredEvent } from '../../../core/events/store.js';
import { applyQuery, parseQuery, queryDictionary } from '../../../core/query/index.js';
import { onMysql } from '../../helpers/database.js';
import { bootKernel } from '../../helpers/kernel.js';
import { queryProblem } from '../../helpers/query-problem.js';

/**
 * HEQL end to end: events appended through the EventStore (its clock spreading them over days), then
 * each query compiled by the generic engine against the real events table and compared with the set
 * its predicate selects from the tenant's rows as read back. Runs on SQLite, and on MariaDB with
 * TEST_DATABASE_URL. The kernel's own boot events live in tenant `default`, outside TENANT.
 */
const TENANT = 'heql-test';
const OTHER = 'heql-other';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Noon UTC, so `today` (00:00) falls exactly on the event 12 hours back: a boundary to check.
const NOW = Date.UTC(2025, 2, 14, 12, 0, 0);

type Input = Omit<NewEventInput, 'tenant'> & { ago: number; tenant?: string };
const FIXTURE: Input[] = [
  { ago: 10 * DAY, code: 'SESSION-END', module: 'discovery', status: 'success', principal: 'agent-1', objectType: 'discovery-session', objectId: 's1' },
  { ago: 9 * DAY, code: 'CERTIFICATE-ENROLL', module: 'webra', status: 'success', principal: 'alice', objectType: 'certificate', objectId: 'c1' },
  { ago: 8 * DAY, code: 'CERTIFICATE-ENROLL', module: 'webra', status: 'failure', principal: 'bob', objectType: 'certificate', objectId: 'c2' },
  { ago: 5 * DAY, code: 'CERTIFICATE-REVOKE', module: 'webra', status: 'success', principal: 'alice', objectType: 'certificate', objectId: 'c1' },
  { ago: 4 * DAY, code: 'CERTIFICATE-REVOKE', module: 'pki', status: 'warning', principal: null, objectType: 'certificate', objectId: 'c3' },
  { ago: 3 * DAY, code: 'CRL-UPDATE', module: 'pki', status: 'success', objectType: 'ca', objectId: 'Acme Root' },
  { ago: 2 * DAY, code: 'CRL-UPDATE', module: 'pki', status: 'failure', objectType: 'ca', objectId: 'Corp CA' },
  { ago: 36 * HOUR, code: 'LOGIN', module: 'security', status: 'success', principal: 'alice', objectType: 'account', objectId: 'alice', payload: { ip: '192.0.2.7', actorId: 'alice', attempts: 3, remembered: true, reason: null } },
  // An empty principal: `exists` counts it as absent, like NULL.
  { ago: 20 * HOUR, code: 'LOGIN', module: 'security', status: 'failure', principal: '', objectType: 'account', objectId: 'mallory', payload: { ip: '198.51.100.1', client: { agent: 'curl' } } },
  { ago: 12 * HOUR, code: 'SESSION-END', module: 'discovery', status: 'warning', principal: 'agent-2', objectType: 'discovery-session', objectId: 's2' },
  { ago: 2 * HOUR, code: 'LABEL-UPDATE', module: 'inventory', status: 'success', principal: 'carol', objectType: 'certificate', objectId: 'c2' },
  { ago: 30 * MINUTE, code: 'TASK-RUN', module: 'scheduler', status: 'failure' },
  // Another tenant, matching many of the queries below: never in the answers.
  { ago: HOUR, tenant: OTHER, code: 'SESSION-END', module: 'discovery', status: 'success', principal: 'alice', objectType: 'certificate', objectId: 'c1' },
];

/** An event as read back from the table, for the predicates. */
type Row = Pick<StoredEvent, 'id' | 'seq' | 'code' | 'module' | 'status' | 'principal' | 'objectType' | 'objectId' | 'createdAt'> & { details: Record<string, unknown> };

const present = (v: string | null): v is string => v !== null && v !== '';
const lowerHas = (v: string | null, part: string): boolean => v !== null && v.toLowerCase().includes(part);

t.test('HEQL over the events table', async (t) => {
  const kernel = await bootKernel(t);
  const { knex, engine } = kernel.db;
  t.equal(engine, onMysql() ? 'mysql' : 'sqlite', 'on the database under test');

  let clock = 0;
  const store = new EventStore(knex, engine, () => clock);
  const appended = [];
  for (const { ago, tenant, ...input } of FIXTURE) {
    clock = NOW - ago;
    appended.push(await store.append({ ...input, tenant: tenant ?? TENANT }));
  }
  const mine = appended.filter((e) => e.tenant === TENANT);

  const rows: Row[] = (await knex('events').where('tenant', TENANT)).map((r: Record<string, unknown>) => ({
    id: r.id as string,
    seq: Number(r.seq),
    code: r.code as string,
    module: r.module as string,
    status: r.status as string,
    principal: r.principal as string | null,
    objectType: r.object_type as string | null,
    objectId: r.object_id as string | null,
    createdAt: Number(r.created_at),
    details: JSON.parse(r.payload as string) as Record<string, unknown>,
  }));
  t.same(rows.map((r) => r.id).sort(), mine.map((e) => e.id).sort(), 'the tenant holds exactly the appended events');
  t.same(
    rows.map((r) => r.createdAt).sort((a, b) => a - b),
    FIXTURE.filter((f) => !f.tenant).map((f) => NOW - f.ago),
    'dates come from the store clock',
  );

  const run = async (query: string): Promise<string[]> => {
    const qb = knex('events').where('events.tenant', TENANT);
    applyQuery(qb, parseQuery(query, EVENT_LANGUAGE), EVENT_LANGUAGE, { knex, now: NOW, table: 'events', tenant: TENANT });
    return ((await qb.pluck('events.id')) as string[]).sort();
  };
  const expected = (predicate: (r: Row) => boolean): string[] => rows.filter(predicate).map((r) => r.id).sort();

  const at = (i: number) => mine[i]!;
  const CASES: [string, (r: Row) => boolean][] = [
    ['', () => true],
    ['code = "SESSION-END"', (r) => r.code === 'SESSION-END'],
    ['code equals "CERTIFICATE-ENROLL"', (r) => r.code === 'CERTIFICATE-ENROLL'],
    ['code != "LOGIN"', (r) => r.code !== 'LOGIN'],
    ['module in ["pki", "security"]', (r) => ['pki', 'security'].includes(r.module)],
    ['module not in ("discovery", "webra")', (r) => !['discovery', 'webra'].includes(r.module)],
    ['status = "failure"', (r) => r.status === 'failure'],
    ['status = "WARNING"', (r) => r.status === 'warning'],
    ['status in ["success", "warning"]', (r) => r.status !== 'failure'],
    ['status not in ["success"]', (r) => r.status !== 'success'],
    ['code contains "revoke"', (r) => lowerHas(r.code, 'revoke')],
    ['object.id contains "ca"', (r) => lowerHas(r.objectId, 'ca')],
    ['not object.id contains "c"', (r) => !lowerHas(r.objectId, 'c')],
    ['code matches "^CERTIFICATE-(ENROLL|REVOKE)$"', (r) => /^CERTIFICATE-(ENROLL|REVOKE)$/.test(r.code)],
    ['code matches "enroll"', () => false],
    ['principal matches "^a"', (r) => r.principal !== null && /^a/.test(r.principal)],
    ['code within ["^LOGIN$", "UPDATE$"]', (r) => /^LOGIN$|UPDATE$/.test(r.code)],
    ['date after -1d', (r) => r.createdAt > NOW - DAY],
    ['date > -36h', (r) => r.createdAt > NOW - 36 * HOUR],
    ['date before -3d', (r) => r.createdAt < NOW - 3 * DAY],
    ['date after today', (r) => r.createdAt > Date.UTC(2025, 2, 14)],
    ['date > "2025-03-10"', (r) => r.createdAt > Date.UTC(2025, 2, 10)],
    ['date < "2025-03-10T12:00:00Z" and date > "2025-03-04T12:00:00Z"', (r) => r.createdAt < NOW - 4 * DAY && r.createdAt > NOW - 10 * DAY],
    [`date = ${NOW - 5 * DAY}`, (r) => r.createdAt === NOW - 5 * DAY],
    ['date before now', () => true],
    ['principal exists', (r) => present(r.principal)],
    ['principal not exists', (r) => !present(r.principal)],
    ['not principal exists', (r) => !present(r.principal)],
    ['principal in ["alice", "carol"]', (r) => r.principal === 'alice' || r.principal === 'carol'],
    ['principal != "alice"', (r) => r.principal !== 'alice'],
    ['object.type not exists', (r) => r.objectType === null],
    ['object.type != "certificate"', (r) => r.objectType !== 'certificate'],
    ['OBJECT.TYPE = "ca"', (r) => r.objectType === 'ca'],
    ['object.type = "certificate" and status = "success"', (r) => r.objectType === 'certificate' && r.status === 'success'],
    ['object.id = "c1" or object.id = "c2"', (r) => r.objectId === 'c1' || r.objectId === 'c2'],
    ['module = "pki" or principal = "alice"', (r) => r.module === 'pki' || r.principal === 'alice'],
    ['not (module = "webra")', (r) => r.module !== 'webra'],
    ['!(module = "webra" || module = "pki")', (r) => r.module !== 'webra' && r.module !== 'pki'],
    ['(code = "LOGIN" or code = "SESSION-END") and not status = "success"', (r) => (r.code === 'LOGIN' || r.code === 'SESSION-END') && r.status !== 'success'],
    ['code = "SESSION-END" && date > -1d', (r) => r.code === 'SESSION-END' && r.createdAt > NOW - DAY],
    ['status = "failure" & (principal exists | object.type not exists)', (r) => r.status === 'failure' && (present(r.principal) || r.objectType === null)],
    ['not (status = "success" or (module = "pki" and date after -3d))', (r) => !(r.status === 'success' || (r.module === 'pki' && r.createdAt > NOW - 3 * DAY))],
    [`seq > ${at(5).seq}`, (r) => r.seq > at(5).seq],
    [`seq < ${at(2).seq} or seq in [${at(10).seq}, ${at(11).seq}]`, (r) => r.seq < at(2).seq || r.seq === at(10).seq || r.seq === at(11).seq],
    [`id = "${at(3).id.toUpperCase()}"`, (r) => r.id === at(3).id],
    [`id in ["${at(0).id}", "${at(7).id}"]`, (r) => r.id === at(0).id || r.id === at(7).id],
    [`id not in ["${at(0).id}"] and code = "SESSION-END"`, (r) => r.id !== at(0).id && r.code === 'SESSION-END'],
  ];

  for (const [query, predicate] of CASES) {
    const want = expected(predicate);
    t.same(await run(query), want, `${query || '(empty)'} → ${want.length}`);
  }
  const discriminating = CASES.filter(([, p]) => expected(p).length > 0 && expected(p).length < rows.length);
  t.ok(discriminating.length >= 20, `${discriminating.length} queries select a proper, non-empty subset`);

  t.test('the tenant narrows every query', async (t) => {
    const everywhere = await knex('events').modify((qb) => applyQuery(qb, parseQuery('code = "SESSION-END"', EVENT_LANGUAGE), EVENT_LANGUAGE, { knex, now: NOW, table: 'events' })).pluck('events.id');
    t.equal(everywhere.length, 3, 'without the tenant, the other tenant’s event matches too');
    t.equal((await run('code = "SESSION-END"')).length, 2);
  });

  t.test('string equality compares exactly', async (t) => {
    // As on SQLite: migration 0007 gives the events columns a NO PAD binary collation on MySQL/MariaDB
    // (the server default folds case and ignores trailing spaces).
    t.same(await run('code = "session-end"'), [], 'case matters');
    t.same(await run('principal = "alice "'), [], 'trailing spaces matter');
    t.same(await run('principal in ["ALICE", "alice "]'), [], 'in lists too');
    t.ok((await run('principal = "alice"')).length > 0, 'the exact value matches');
  });

  t.test('errors', async (t) => {
    const problem = queryProblem(knex, EVENT_LANGUAGE, NOW);
    const unknown = problem('codes = "LOGIN"');
    t.equal(unknown.code, 'HQL-001', 'unknown field');
    t.match(unknown.message, /unknown field "codes" \(did you mean "code"/);
    t.match(unknown.extra, { position: 0, expected: ['code'] });
    t.match(problem('creation.date > -1d'), { code: 'HQL-001', message: /unknown field "creation\.date"/ }, 'no alias of date');
    t.match(problem('status = "ok"'), { code: 'HQL-001', message: /"ok" is not a value of status/ }, 'status is a closed set');
    t.match(problem('seq contains "1"'), { code: 'HQL-001', message: /seq does not take "contains"/ });
    t.match(problem('date > "yesterday"'), { code: 'HQL-001', message: /is not a date/ });
    t.match(problem('seq > "many"'), { code: 'HQL-001', message: /is not a number/ });
    t.match(problem('detail.a$b = "x"'), { code: 'HQL-001' }, 'a detail key cannot carry JSON path syntax');
    t.match(problem(`detail.${'k'.repeat(65)} = "x"`), { code: 'HQL-001', message: /a key is letters, digits/ }, 'nor run past 64 characters a member');
    t.match(problem('detail. = "x"'), { code: 'HQL-001' }, 'a detail key is needed');
    t.match(problem('status is valid'), { code: 'HQL-001', message: /is not a condition of HEQL \(accepted: none\)/ }, 'no specials');
  });

  t.test('dictionary', async (t) => {
    const dictionary = queryDictionary(EVENT_LANGUAGE);
    t.same(
      dictionary.map((e) => e.name),
      ['id', 'code', 'module', 'status', 'principal', 'object.type', 'object.id', 'timestamp', 'date', 'node', 'removeat', 'detail', 'seq'],
      'every field, no special',
    );
    t.ok(dictionary.every((e) => e.kind === 'field'));
    t.match(dictionary.find((e) => e.name === 'status'), { type: 'string', property: 'status', groupable: true, values: [...EVENT_STATUSES] });
    t.match(dictionary.find((e) => e.name === 'detail'), { type: 'string', property: 'details', parametric: true });
    t.match(dictionary.find((e) => e.name === 'timestamp'), { type: 'date', property: 'timestamp', sortable: true });
    t.match(dictionary.find((e) => e.name === 'date'), { type: 'date', property: 'timestamp', sortable: true, operators: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'] });
    t.match(dictionary.find((e) => e.name === 'seq'), { type: 'number', property: 'seq', sortable: true });
    t.match(dictionary.find((e) => e.name === 'id'), { property: '_id' });
  });
});
