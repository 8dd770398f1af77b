import fc from 'fast-check';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { checkRegex } from '../../../core/query/regex.js';
import { queryDb, type Row } from './fixture.js';

/**
 * The portable regex subset (core/query/regex.ts) against the database that runs it: every accepted
 * pattern selects, on SQLite (JavaScript) and on MariaDB (PCRE2) alike, exactly the values JavaScript
 * says it matches. Known corners (\w \d \s \b beyond ASCII, `$` before a final newline, `.` and `\r`)
 * are left out of the samples and the pieces, as documented.
 */
const db = await queryDb(t);
t.comment(`engine: ${db.engine}`);

const SAMPLES = ['abc', 'ABC', 'a.b', 'a-b', 'www.example.com', 'x\ny', 'é', 'É', '🚀', 'a🚀b', '123', 'a b', 'aaa', '_', 'A1_b2', 'a{2}', '(a)', 'a|b', 'a\\b', '[x]'];
const rows: Row[] = SAMPLES.map((value, i) => ({ name: `r${String(i).padStart(2, '0')}`, labels: { rx: value } }));
await db.insert(rows);
const PIECES = ['a', 'b', 'c', 'A', '1', ' ', '_', 'é', '🚀', '.', '*', '+', '?', '^', '$', '(', ')', '[', ']', '-', '|', '\\.', '\\-', '\\|', '\\\\', '\\{', '{2}', '{1,3}', '[a-c]', '[^a]', '(?:', '(?=', '(?!', '\\x41', '\\n', '.*'];

/** The query literal of a pattern. */
const literal = (v: string): string => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

t.test('accepted patterns select what JavaScript matches', async (t) => {
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }), async (pieces) => {
      const pattern = pieces.join('');
      let checked;
      try {
        checked = checkRegex(pattern);
      } catch {
        return true;
      }
      accepted++;
      let names: string[];
      try {
        names = await db.names(`label.rx matches ${literal(pattern)}`);
      } catch (err) {
        // Refused by the parser is fine; a database error is not.
        return err instanceof ProblemError && err.code === 'HQL-001';
      }
      const re = new RegExp(checked.pattern, 'u');
      const expected = rows.filter((r) => re.test(r.labels!.rx!)).map((r) => r.name);
      if (JSON.stringify(names) !== JSON.stringify(expected)) {
        t.comment(`pattern ${JSON.stringify(pattern)} → ${JSON.stringify(checked.pattern)}: db ${names.join(',')} js ${expected.join(',')}`);
        return false;
      }
      return true;
    }),
    { numRuns: 1500, seed: 66 },
  );
  t.ok(accepted > 100, `${accepted} accepted patterns agreed`);
});
