import t from 'tap';
import { checkRegex, RegexError } from '../../../core/query/regex.js';
import { sqliteRegexp } from '../../../core/query/sqlite-regexp.js';

/** The portable regex subset, its literal analysis, and the SQLite regexp() function. */

t.test('portable patterns pass, with one canonical spelling', async (t) => {
  const cases: [string, string][] = [
    ['^www\\.', '^www\\.'],
    ['\\-\\@\\#', '-@#'],
    ['[\\-\\@\\.]', '[\\-@\\.]'],
    ['\\/', '\\/'],
    ['^[a-z0-9-]+\\.(dev|prod)\\.example\\.com$', '^[a-z0-9-]+\\.(dev|prod)\\.example\\.com$'],
    ['(?:ab)+c*?d{2,3}e{4}f{5,}?', '(?:ab)+c*?d{2,3}e{4}f{5,}?'],
    ['a(?=b)(?!c)', 'a(?=b)(?!c)'],
    ['\\d\\w\\s\\D\\W\\S\\bx\\B', '\\d\\w\\s\\D\\W\\S\\bx\\B'],
    ['\\x41\\n\\t', '\\x41\\n\\t'],
    ['é🚀[à-ÿ]', 'é🚀[à-ÿ]'],
    ['', ''],
    ['a|', 'a|'],
    ['(www\\.)?example', '(www\\.)?example'],
  ];
  for (const [source, pattern] of cases) t.equal(checkRegex(source).pattern, pattern, source);
});

t.test('non-portable or dangerous patterns are refused', async (t) => {
  const refused: [string, RegExp][] = [
    ['(', /missing "\)"/],
    [')', /unbalanced/],
    ['[', /missing "\]"/],
    ['[]', /empty character class/],
    ['[^]', /empty character class/],
    ['[[:alpha:]]', /POSIX/],
    ['a{', /literal "\{"/],
    ['}', /literal "\}"/],
    [']', /literal "\]"/],
    ['*a', /nothing to repeat/],
    ['a**', /nothing to repeat/],
    ['a*+', /nothing to repeat/],
    ['^*', /nothing to repeat/],
    ['(?=a)*', /nothing to repeat/],
    ['(?<=a)b', /groups are portable/],
    ['(?<name>a)', /groups are portable/],
    ['(?i)a', /groups are portable/],
    ['(a)\\1', /not portable/],
    ['\\p{L}', /not portable/],
    ['\\u0041', /not portable/],
    ['\\v', /not portable/],
    ['\\k<a>', /not portable/],
    ['\\x4', /two hexadecimal/],
    ['\\', /end of the pattern/],
    ['[\\b]', /not portable in a class/],
    ['a\u0000', /NUL/],
    ['a{1001}', /stop at 1000/],
    ['a{3,2}', /out of order/],
    ['[z-a]', /invalid regular expression/],
    ['[\\d-z]', /invalid regular expression/],
    ['(a+)+$', /catastrophic/],
    ['(a|ab)*c', /catastrophic/],
    ['(\\w|\\d)+', /catastrophic/],
    ['((ab)*c)*', /catastrophic/],
    ['.*a.*b.*c.*d.*e', /at most 4 unbounded/],
    ['x'.repeat(513), /limited to 512/],
  ];
  for (const [source, message] of refused) {
    let error: unknown;
    try {
      checkRegex(source);
    } catch (err) {
      error = err;
    }
    t.ok(error instanceof RegexError && message.test(error.message), `${source.slice(0, 40)}: ${String((error as Error | undefined)?.message)}`);
  }
  t.ok(checkRegex('(ab){2}'), 'a bounded repeat of a simple group is fine');
  t.ok(checkRegex('(a|b)?c'), 'an optional alternation is fine');
  t.ok(checkRegex('x'.repeat(512)), '512 characters');
});

t.test('literal analysis: what an index can answer', async (t) => {
  const cases: [string, { text: string; start: boolean; end: boolean } | undefined][] = [
    ['\\.example\\.com$', { text: '.example.com', start: false, end: true }],
    ['.*\\.example\\.com$', { text: '.example.com', start: false, end: true }],
    ['^.*\\.example\\.com$', { text: '.example.com', start: false, end: true }],
    ['^www\\.', { text: 'www.', start: true, end: false }],
    ['^www\\..*', { text: 'www.', start: true, end: false }],
    ['^a\\.b$', { text: 'a.b', start: true, end: true }],
    ['^a\\-b\\x41$', { text: 'a-bA', start: true, end: true }],
    ['example', { text: 'example', start: false, end: false }],
    ['^.*$', undefined],
    ['^$', undefined],
    ['$', undefined],
    ['^web[0-9]\\.', undefined],
    ['^a.b$', undefined],
    ['^a|b$', undefined],
    ['^ab?$', undefined],
    ['^a\\d$', undefined],
    ['^a.+$', undefined],
  ];
  for (const [source, literal] of cases) t.same(checkRegex(source).literal, literal, source);
});

t.test('sqliteRegexp: flags, NULLs, cache', async (t) => {
  t.equal(sqliteRegexp('(?-i)^abc$', 'abc'), 1);
  t.equal(sqliteRegexp('(?-i)^abc$', 'ABC'), 0);
  t.equal(sqliteRegexp('(?i)^abc$', 'ABC'), 1);
  t.equal(sqliteRegexp('^a.c$', 'a🚀c'), 1, 'code points (u flag)');
  t.equal(sqliteRegexp('x', null), 0);
  t.equal(sqliteRegexp(null, 'x'), 0);
  t.equal(sqliteRegexp('^4', 443), 1);
  t.equal(sqliteRegexp('^a', Buffer.from('abc')), 1);
  let matched = 0;
  for (let i = 0; i < 600; i++) matched += sqliteRegexp(`^v${i}$`, `v${i}`);
  t.equal(matched, 600, 'more patterns than the cache holds');
  t.equal(sqliteRegexp('^v0$', 'v0'), 1, 'evicted entries compile again');
});
