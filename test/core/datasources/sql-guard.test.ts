/** The first fence of database datasources: one SELECT, placeholders counted outside strings and comments. */
import t from 'tap';
import { maskSql, selectProblem } from '../../../core/datasources/sql-guard.js';

t.test('a single SELECT passes', async (t) => {
  for (const [query, parameters] of [
    ['SELECT 1', 0],
    ['  select hostname, owner from hosts where active = ?;  ', 1],
    ["SELECT * FROM hosts WHERE name = 'a;b' AND note = 'what?'", 0],
    ['SELECT * FROM hosts -- a comment; with ?\nWHERE a = ?', 1],
    ['SELECT * FROM hosts /* ; ? */ WHERE a = ? AND b = ?', 2],
    ['SELECT "into" FROM hosts', 0],
    ["SELECT 'it''s' AS s", 0],
  ] as const) {
    t.equal(selectProblem(query, 'sqlite', parameters), null, query);
    t.equal(selectProblem(query, 'mysql', parameters), null, `${query} (mysql)`);
  }
  t.equal(selectProblem("SELECT 'a\\'; DELETE FROM x; -- '", 'mysql', 0), null, 'a MySQL backslash escape stays inside its string');
});

t.test('anything else is refused with its reason', async (t) => {
  const cases: [string, 'sqlite' | 'mysql', number, RegExp][] = [
    ['DELETE FROM hosts', 'sqlite', 0, /must be a SELECT/],
    ['WITH x AS (SELECT 1) DELETE FROM hosts', 'sqlite', 0, /must be a SELECT/],
    ['SELECT 1; DROP TABLE hosts', 'sqlite', 0, /single statement/],
    ["SELECT 'a\\'; DELETE FROM x; -- '", 'sqlite', 0, /single statement/],
    ['SELECT * FROM hosts INTO OUTFILE "/tmp/x"', 'mysql', 0, /INTO is refused/],
    ['SELECT * FROM hosts FOR UPDATE', 'mysql', 0, /locking reads/],
    ['SELECT * FROM hosts LOCK IN SHARE MODE', 'mysql', 0, /locking reads/],
    ['SELECT 1 /*! ; DROP TABLE x */', 'mysql', 0, /executable comments/],
    ["SELECT 'open", 'sqlite', 0, /not closed/],
    ['SELECT 1 /* open', 'mysql', 0, /not closed/],
    ['SELECT * FROM hosts WHERE a = ?', 'sqlite', 0, /has 1 "\?" placeholder for 0 parameters/],
    ['# comment\nDELETE FROM hosts', 'mysql', 0, /must be a SELECT/],
  ];
  for (const [query, dialect, parameters, message] of cases) t.match(selectProblem(query, dialect, parameters), message, query);
});

t.test('masking keeps lengths and hides literals', async (t) => {
  const query = "SELECT 'a;?' , `x?` FROM t -- ?\n";
  const masked = maskSql(query, 'mysql')!;
  t.equal(masked.length, query.length);
  t.notOk(masked.includes('?'));
  t.notOk(masked.includes(';'));
});
