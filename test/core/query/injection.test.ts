import fc from 'fast-check';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { idOf, queryDb, TENANT, type Row } from './fixture.js';

/**
 * Hostile input (issue 6 item 3): every query either selects the right rows or fails with HQL-001 —
 * never another exception, never a SQL error — and the data is intact afterwards. Runs on SQLite, and
 * on MariaDB with TEST_DATABASE_URL.
 */
const db = await queryDb(t);
t.comment(`engine: ${db.engine}`);

const NOTE = `it's "odd" -- ; /* x */ \\ %_`;
const rows: Row[] = [
  { name: 'plain', profile: 'p', team: 'a', owner: 'o', sans: ['plain.example.com'], labels: { note: NOTE } },
  { name: 'quote', dn: `CN=x' OR '1'='1`, profile: 'p', team: 'b', owner: null, labels: { note: 'n' } },
  { name: 'uni', dn: 'CN=مرحبا 🚀 \u202e', profile: 'p', team: 'c', owner: 'o', sans: ['uni.example.org'] },
  { name: 'nul', dn: 'CN=nul', profile: null, team: 't\u0000x', owner: 'p' },
];
await db.insert(rows);
const ALL = rows.map((r) => r.name).sort();

/** A query string literal for any value: only `"` and `\` need escaping. */
const literal = (v: string): string => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** Names selected, or the HQL-001 error; anything else (a SQL error, a TypeError) fails the test. */
async function run(query: string): Promise<string[] | ProblemError> {
  try {
    return await db.names(query);
  } catch (err) {
    if (err instanceof ProblemError && err.code === 'HQL-001') return err;
    throw err;
  }
}

t.test('values with quotes, comments, wildcards and odd characters select the right rows', async (t) => {
  const exact: [string, string[]][] = [
    [`label.note equals ${literal(NOTE)}`, ['plain']],
    [`label.note contains "' --"`, []],
    [`label.note contains "-- ;"`, ['plain']],
    [`label.note contains "/* x */"`, ['plain']],
    [`label.note contains "%_"`, ['plain']],
    [`label.note contains "%"`, ['plain']],
    [`label.note contains "_"`, ['plain']],
    [`label.note contains "\\\\"`, ['plain']],
    [`label.note contains "!"`, []],
    [`label.note not in [${literal(NOTE)}]`, ['nul', 'quote', 'uni']],
    [`dn contains "' OR '1'='1"`, ['quote']],
    [`dn equals "x' OR '1'='1"`, []],
    [`dn equals "CN=x' OR '1'='1"`, ['quote']],
    [`dn equals 'CN=x\\' OR \\'1\\'=\\'1'`, ['quote']],
    [`dn contains "🚀"`, ['uni']],
    [`dn contains "\\u202e"`, ['uni']],
    [`dn contains "مرحبا"`, ['uni']],
    [`team = "a\\" OR 1=1 --"`, []],
    [`team = "a'; DROP TABLE inv_certificates; --"`, []],
    [`team in ["a", "b'); DROP TABLE inv_certificates; --"]`, ['plain']],
    [`team = "\\u0000"`, []],
    [`team = "t\\u0000x"`, ['nul']],
    [`team in [${Array.from({ length: 10_000 }, (_, i) => literal(`t${i}`)).join(',')}, "c"]`, ['uni']],
    [`owner not in [${Array.from({ length: 10_000 }, (_, i) => literal(`o${i}`)).join(',')}, "o"]`, ['nul', 'quote']],
    [`san matches "^plain\\\\.example\\\\.com$"`, ['plain']],
    [`san matches "\\\\.org$"`, ['uni']],
    [`san matches "'"`, []],
    [`label."it's" exists`, []],
    [`label."note" = "n"`, ['quote']],
  ];
  for (const [query, expected] of exact) {
    const result = await run(query);
    t.same(result, [...expected].sort(), query.slice(0, 100));
  }
});

t.test('hostile query text is HQL-001', async (t) => {
  const refused = [
    `dn; DROP TABLE inv_certificates`,
    `dn; DROP TABLE x = "y"`,
    `dn equals "x"; DROP TABLE inv_certificates; --`,
    `dn equals 'x' -- comment`,
    `/* c */ dn equals "x"`,
    `dn/**/equals "x"`,
    `dn equals "unterminated`,
    `label.note matches "(a+)+$"`,
    `label.note matches "(a+)+$" and`,
    `"dn" = "x"`,
    `dn = x`,
    `dn = "x" OR 1=1`,
    `dn = "x" UNION SELECT 1`,
    `inv_certificates.dn = "x"`,
    `label.note\` = "x"`,
    '('.repeat(10_000) + 'team = "a"' + ')'.repeat(10_000),
    'not '.repeat(10_000) + 'team = "a"',
    '! '.repeat(10_000) + 'team = "a"',
    `\u0000`,
    `team == `,
    `san matches "["`,
    `san matches "\\\\p{L}"`,
    `team contains "\\u0000"`,
    `san matches "a\\u0000"`,
    `team = "${'x'.repeat(2_000_000)}"`,
    `team in [${Array.from({ length: 30_001 }, (_, i) => literal(`t${i}`)).join(',')}]`,
  ];
  for (const query of refused) {
    const result = await run(query);
    t.ok(result instanceof ProblemError, `${query.slice(0, 60)}: HQL-001`);
  }
});

t.test('random values never break out: HQL-001 or a partition of the rows', async (t) => {
  const templates: ((v: string) => string)[] = [
    (v) => `dn equals ${literal(v)}`,
    (v) => `dn != ${literal(v)}`,
    (v) => `owner contains ${literal(v)}`,
    (v) => `team in [${literal(v)}, ${literal(v.slice(1))}]`,
    (v) => `label.note equals ${literal(v)}`,
    (v) => `label.${literal(v)} exists`,
    (v) => `san matches ${literal(v)}`,
    (v) => `owner matches ${literal(v)}`,
    (v) => `san within [${literal(v)}, "^x"]`,
    (v) => `valid.until before ${literal(v)}`,
    (v) => `discoverydata.tlsport = ${literal(v)}`,
    (v) => `revocation.reason = ${literal(v)}`,
    (v) => `status is ${literal(v)}`,
    (v) => `id = ${literal(v)} or serial = ${literal(v)}`,
  ];
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(fc.nat(templates.length - 1), fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom("'", '"', '\\', '%', '_', '--', ';', '\u0000', '(?i)', '.*', '\\d+')), async (i, v) => {
      const query = templates[i]!(v);
      const selected = await run(query);
      const negated = await run(`not (${query})`);
      if (selected instanceof ProblemError || negated instanceof ProblemError) {
        refused++;
        return selected instanceof ProblemError && negated instanceof ProblemError;
      }
      const both = [...selected, ...negated].sort();
      return JSON.stringify(both) === JSON.stringify(ALL);
    }),
    { numRuns: 400, seed: 63 },
  );
  t.pass(`400 random values: a partition or HQL-001 (${refused} refused)`);
});

t.test('random query text: rows or HQL-001', async (t) => {
  const prefixes = ['team = ', 'dn contains "', 'label.note in [', '(', 'status is ', 'san matches "', 'not ', 'valid.until > ', 'owner within ['];
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom(...prefixes).chain((p) => fc.string({ maxLength: 30 }).map((s) => p + s))),
      async (query) => {
        const result = await run(query);
        return Array.isArray(result) || result.code === 'HQL-001';
      },
    ),
    { numRuns: 400, seed: 64 },
  );
  t.pass('400 random queries');
});

t.test('stored values round-trip through equals, and through contains (ASCII)', async (t) => {
  const id = idOf('plain');
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }), fc.string({ minLength: 1, maxLength: 60 })), fc.nat(), fc.nat(), async (value, a, b) => {
      await db.knex('inv_certificate_labels').insert({ certificate_id: id, tenant: TENANT, key: 'rt', value });
      try {
        const equal = await run(`label.rt equals ${literal(value)}`);
        if (!Array.isArray(equal) || !equal.includes('plain')) return false;
        if (/^[\x20-\x7e]*$/.test(value)) {
          const [from, to] = [a % (value.length + 1), b % (value.length + 1)].sort((x, y) => x - y);
          const contained = await run(`label.rt contains ${literal(value.slice(from, to).toUpperCase())}`);
          if (!Array.isArray(contained) || !contained.includes('plain')) return false;
        }
        return true;
      } finally {
        await db.knex('inv_certificate_labels').where({ certificate_id: id, key: 'rt' }).delete();
      }
    }),
    { numRuns: 150, seed: 65 },
  );
  t.pass('150 values');
});

t.test('the data is intact', async (t) => {
  t.same(await db.names(''), ALL);
  t.equal(Number(((await db.knex('inv_certificate_labels').count({ n: '*' }).first()) as { n: number | string }).n), 2);
  t.equal(Number(((await db.knex('inv_certificates').count({ n: '*' }).first()) as { n: number | string }).n), rows.length);
});
