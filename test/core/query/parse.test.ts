import t from 'tap';
import { CERTIFICATE_LANGUAGE as L } from '../../../core/inventory/language.js';
import { ProblemError } from '../../../core/errors/index.js';
import { fieldByName, fieldByProperty, parseQuery, parseIsoDate, queryDictionary, type QueryNode } from '../../../core/query/index.js';

/** The grammar and the checks against the HCQL table (issue 6 item 3): no database here. */
const parse = (q: string | null | undefined): QueryNode => parseQuery(q, L);

/** The HQL-001 a query fails with, as its body (message, position, line, column, expected). */
function failure(q: string): Record<string, unknown> {
  try {
    parse(q);
  } catch (err) {
    if (err instanceof ProblemError && err.code === 'HQL-001') return err.toBody() as unknown as Record<string, unknown>;
    throw err;
  }
  throw new Error(`parsed: ${q}`);
}

/** Compact rendering of a tree: `(and (equals dn "x") (not …))`. */
function show(n: QueryNode): string {
  switch (n.kind) {
    case 'all':
      return 'all';
    case 'and':
    case 'or':
      return `(${n.kind} ${n.children.map(show).join(' ')})`;
    case 'not':
      return `(not ${show(n.child)})`;
    case 'compare': {
      const field = n.key !== undefined ? `${n.field}[${n.key}]` : n.field;
      const values = n.values.map((v) => (v.kind === 'string' ? JSON.stringify(v.value) : v.kind === 'word' ? v.value : v.kind === 'relative' ? `${v.ms}ms` : String(v.value)));
      return `(${n.operator} ${field}${values.length ? ' ' + values.join(' ') : ''})`;
    }
    case 'special':
      return `(${n.subject} ${n.verb}${n.negated ? ' not' : ''} ${n.value})`;
  }
}

t.test('empty queries select everything', async (t) => {
  for (const q of [null, undefined, '', '   ', '\n\t ']) t.same(parse(q), { kind: 'all' }, JSON.stringify(q));
});

t.test('operator spellings', async (t) => {
  const cases: [string, string][] = [
    ['dn equals "x"', '(equals dn "x")'],
    ['dn = "x"', '(equals dn "x")'],
    ['dn == "x"', '(equals dn "x")'],
    ['dn != "x"', '(not equals dn "x")'],
    ['dn not equals "x"', '(not equals dn "x")'],
    ['dn NOT   EQUALS "x"', '(not equals dn "x")'],
    ['dn matches "^x"', '(matches dn "^x")'],
    ['dn contains "x"', '(contains dn "x")'],
    ['dn in ["x", "y"]', '(in dn "x" "y")'],
    ['dn in ("x","y")', '(in dn "x" "y")'],
    ['dn not in ["x"]', '(not in dn "x")'],
    ['dn within ["^a", "b$"]', '(within dn "^a" "b$")'],
    ['valid.until before now', '(before valid.until now)'],
    ['valid.until < today', '(before valid.until today)'],
    ['valid.until after 30d', '(after valid.until 2592000000ms)'],
    ['valid.until > -24h', '(after valid.until -86400000ms)'],
    ['dn exists', '(exists dn)'],
    ['dn not exists', '(not exists dn)'],
    ['dn Exists', '(exists dn)'],
    ['dn Matches "a"', '(matches dn "a")'],
    ['dn="x"', '(equals dn "x")'],
    ['dn in [1, -2, 1.5]', '(in dn 1 -2 1.5)'],
    ['discoverydata.tlsport = 443', '(equals discoverydata.tlsport 443)'],
  ];
  for (const [q, tree] of cases) t.equal(show(parse(q)), tree, q);
});

t.test('boolean operators and precedence', async (t) => {
  const cases: [string, string][] = [
    ['dn exists and team exists', '(and (exists dn) (exists team))'],
    ['dn exists && team exists & owner exists', '(and (exists dn) (exists team) (exists owner))'],
    ['dn exists or team exists || owner exists | grade exists', '(or (exists dn) (exists team) (exists owner) (exists grade))'],
    ['dn exists or team exists and owner exists', '(or (exists dn) (and (exists team) (exists owner)))'],
    ['dn exists and team exists or owner exists', '(or (and (exists dn) (exists team)) (exists owner))'],
    ['(dn exists or team exists) and owner exists', '(and (or (exists dn) (exists team)) (exists owner))'],
    ['not dn exists and team exists', '(and (not (exists dn)) (exists team))'],
    ['!dn exists', '(not (exists dn))'],
    ['!(dn exists)', '(not (exists dn))'],
    ['not not dn exists', '(not (not (exists dn)))'],
    ['NOT (dn exists OR team exists)', '(not (or (exists dn) (exists team)))'],
    ['(((dn exists)))', '(exists dn)'],
    ['dn exists and (team exists and owner exists)', '(and (exists dn) (exists team) (exists owner))'],
    ['dn = "a"and team = "b"', '(and (equals dn "a") (equals team "b"))'],
    ['notafter exists', 'x'],
  ];
  for (const [q, tree] of cases.slice(0, -1)) t.equal(show(parse(q)), tree, q);
  // `not` needs a word boundary: `notafter` is a (unknown) field, not `not after`.
  t.match(failure('notafter exists'), { message: /unknown field "notafter"/ });
});

t.test('fields: case-insensitive names, parametric keys keep their case', async (t) => {
  t.equal(show(parse('DN = "x"')), '(equals dn "x")');
  t.equal(show(parse('Valid.Until before now')), '(before valid.until now)');
  t.equal(show(parse('label.Env = "prod"')), '(equals label[Env] "prod")');
  t.equal(show(parse('LABEL.env = "prod"')), '(equals label[env] "prod")');
  t.equal(show(parse('label."my key" = "v"')), '(equals label[my key] "v")');
  t.equal(show(parse("metadata.'a.b' exists")), '(exists metadata[a.b])');
  t.equal(show(parse('metadata.a.b exists')), '(exists metadata[a.b])');
  t.equal(show(parse('metadata.ticket-no_1 exists')), '(exists metadata[ticket-no_1])');
  t.match(failure('label = "x"'), { message: /label takes a key/, position: 0 });
  t.match(failure('label."" = "x"'), { message: /empty/ });
  t.match(failure('dn."x" = "y"'), { message: /not a field with keys/ });
  t.match(failure('nosuchfield = "x"'), { message: /unknown field "nosuchfield"/, position: 0 });
  t.match(failure('team = "a" and tema = "b"'), { message: /unknown field "tema" \(did you mean "team"\?\)/, position: 15, expected: ['team'] });
});

t.test('values: strings, escapes, numbers, durations, words', async (t) => {
  const v = (q: string) => (parse(q) as Extract<QueryNode, { kind: 'compare' }>).values[0];
  t.match(v('dn = "a\\"b"'), { kind: 'string', value: 'a"b' });
  t.match(v('dn = "a\\\\b"'), { kind: 'string', value: 'a\\b' });
  t.match(v('dn = "a\\nb\\tc\\rd"'), { kind: 'string', value: 'a\nb\tc\rd' });
  t.match(v('dn = "\\u00e9\\u0000"'), { kind: 'string', value: 'é\u0000' });
  t.match(v("dn = 'it\\'s'"), { kind: 'string', value: "it's" });
  t.match(v(`dn = 'say "hi"'`), { kind: 'string', value: 'say "hi"' });
  t.match(v('dn = "CN=a\\,b"'), { kind: 'string', value: 'CN=a\\,b' }, 'unknown escapes keep their backslash (RFC 4514 DNs)');
  t.match(v('dn matches "\\.example\\.com$"'), { kind: 'string', value: '\\.example\\.com$' }, 'a regex with single backslashes');
  t.match(v('dn matches "\\\\.example\\\\.com$"'), { kind: 'string', value: '\\.example\\.com$' }, 'or doubled');
  t.match(v('dn matches "\\bx\\b"'), { kind: 'string', value: '\\bx\\b' }, '\\b stays a word boundary');
  t.match(v('dn = "🚀 مرحبا"'), { kind: 'string', value: '🚀 مرحبا' });
  t.match(v('dn = ""'), { kind: 'string', value: '' });
  t.match(v('discoverydata.tlsport = 443'), { kind: 'number', value: 443, raw: '443' });
  t.match(v('discoverydata.tlsport = -1'), { kind: 'number', value: -1 });
  t.match(v('discoverydata.tlsport = 1.5'), { kind: 'number', value: 1.5 });
  const units: [string, number][] = [['30d', 30 * 86_400_000], ['-30d', -30 * 86_400_000], ['24h', 86_400_000], ['5m', 300_000], ['60s', 60_000], ['2w', 14 * 86_400_000], ['1y', 365 * 86_400_000], ['+1D', 86_400_000]];
  for (const [raw, ms] of units) t.match(v(`valid.until before ${raw}`), { kind: 'relative', ms, raw }, raw);
  for (const w of ['now', 'today', 'NOW', 'Today']) t.match(v(`valid.until before ${w}`), { kind: 'word', value: w.toLowerCase() });
  t.match(v('dn = true'), { kind: 'word', value: 'true' });
  t.match(v('dn = 443'), { kind: 'number', raw: '443' }, 'numbers are text for string fields');
  t.equal((parse('dn in [1, "b", now, 30d]') as Extract<QueryNode, { kind: 'compare' }>).values.length, 4);
  t.match(v('dn = "x"'), { offset: 5 });
});

t.test('dates', async (t) => {
  const cases: [string, number | undefined][] = [
    ['2025', Date.UTC(2025, 0, 1)],
    ['2025-03', Date.UTC(2025, 2, 1)],
    ['2025-03-14', Date.UTC(2025, 2, 14)],
    ['2025-03-14T10:20', Date.UTC(2025, 2, 14, 10, 20)],
    ['2025-03-14 10:20', Date.UTC(2025, 2, 14, 10, 20)],
    ['2025-03-14T10:20:30', Date.UTC(2025, 2, 14, 10, 20, 30)],
    ['2025-03-14T10:20:30.123Z', Date.UTC(2025, 2, 14, 10, 20, 30, 123)],
    ['2025-03-14T10:20:30.1Z', Date.UTC(2025, 2, 14, 10, 20, 30, 100)],
    ['2025-03-14T10:20:30+02:00', Date.UTC(2025, 2, 14, 8, 20, 30)],
    ['2025-03-14T10:20:30-0530', Date.UTC(2025, 2, 14, 15, 50, 30)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['0050-01-01', -60589296000000],
    ['2025-02-29', undefined],
    ['2025-13', undefined],
    ['2025-00', undefined],
    ['2025-04-31', undefined],
    ['2025-03-14T24:00', undefined],
    ['2025-03-14T10:60', undefined],
    ['2025-03-14Z', undefined],
    ['25', undefined],
    ['not a date', undefined],
    ['', undefined],
  ];
  for (const [text, ms] of cases) t.equal(parseIsoDate(text), ms, text);
  t.ok(parse('valid.until before "2025-03-14T10:20:30+02:00"'));
  t.ok(parse('valid.until before 1741947630000'));
  t.match(failure('valid.until before "2025-02-30"'), { error: 'HQL-001', message: /"2025-02-30" is not a date/, position: 19 });
  t.match(failure('valid.until before true'), { message: /true is not a date/ });
  t.match(failure('valid.until before 1.5'), { message: /1\.5 is not a date/ });
  t.match(failure(`valid.until before ${'9'.repeat(30)}d`), { message: /is not a date/ });
});

t.test('specials', async (t) => {
  t.equal(show(parse('status is valid')), '(status is valid)');
  t.equal(show(parse('status is not expired')), '(status is not expired)');
  t.equal(show(parse('STATUS IS NOT Revoked')), '(status is not revoked)');
  t.equal(show(parse('certificate is selfsigned')), '(certificate is selfsigned)');
  t.equal(show(parse('trigger.results has no failure')), '(trigger.results has not failure)');
  t.equal(show(parse('trigger.results has not failure')), '(trigger.results has not failure)');
  t.equal(show(parse('trigger.results has success')), '(trigger.results has success)');
  t.equal(show(parse('status is "valid"')), '(status is valid)');
  t.equal(show(parse('not status is valid and certificate is trusted')), '(and (not (status is valid)) (certificate is trusted))');
  t.match(failure('status is sleepy'), { message: /"sleepy" is not a value of "status is" \(accepted: valid, expired or revoked\)/, position: 10, expected: ['valid', 'expired', 'revoked'] });
  t.match(failure('request is valid'), { message: /"request is" is not a condition of HCQL/, position: 0 });
  t.match(failure('status has valid'), { message: /"status has" is not a condition/ });
  t.match(failure('status is'), { position: 9, expected: ['"value"'] });
  t.match(failure('status is not'), { position: 13 });
  t.match(failure('status is constructor'), { message: /"constructor" is not a value/ }, 'no prototype keys');
});

t.test('operators a field does not take', async (t) => {
  t.match(failure('valid.until matches "x"'), { message: /valid.until does not take "matches"/, position: 12, expected: ['equals', 'not equals', 'before', 'after', 'in', 'not in', 'exists', 'not exists'] });
  t.match(failure('dn before "x"'), { message: /dn does not take "before"/ });
  t.match(failure('discoverydata.tlsport contains "4"'), { message: /does not take "contains"/ });
  t.match(failure('discoverydata.tlsport = "abc"'), { message: /"abc" is not a number/ });
  t.match(failure(`discoverydata.tlsport = ${'9'.repeat(400)}`), { message: /is not a number/ });
  t.match(failure('revocation.reason = "nope"'), { message: /"nope" is not a value of revocation.reason/, position: 20 });
  t.ok(parse('revocation.reason = "KeyCompromise"'), 'normalised before the check');
  t.match(failure('dn matches "("'), { message: /invalid regular expression/, position: 11 });
  t.match(failure('dn within ["a", "[b"]'), { message: /invalid regular expression "\[b"/, position: 16 });
});

t.test('syntax errors: position, line, column, expected', async (t) => {
  t.match(failure('dn equals'), { error: 'HQL-001', status: 400, position: 9, line: 1, column: 10, message: /^Invalid query at position 9: expected .* but found end of query$/ });
  t.ok((failure('dn equals').expected as string[]).includes('string'), 'a string is expected after an operator');
  t.match(failure('dn equals "x" xyz'), { position: 14, expected: ['"and"', '"or"', 'end of query'], message: 'Invalid query at position 14: expected "and", "or" or end of query but found "xyz"' });
  t.match(failure('(dn equals "x" xyz'), { position: 15, expected: ['"and"', '"or"', '")"'] });
  t.match(failure('(profile = "a"'), { position: 14, message: /found end of query/ });
  t.match(failure('dn equals "x"\nand team = "y" )'), { position: 29, line: 2, column: 16 });
  t.match(failure('dn'), { position: 2, expected: ['operator'] });
  t.match(failure('dn in ["a",]'), { position: 11 });
  t.match(failure('dn in []'), { position: 7 });
  t.match(failure('dn in "a"'), { position: 6, expected: ['"["', '"("'] });
  t.match(failure('dn = "unterminated'), { position: 5, message: /unterminated string/ });
  t.match(failure("dn = 'unterminated"), { position: 5, message: /unterminated string/ });
  t.match(failure('dn = "\\u12"'), { position: 7, message: /\\u escape/ });
  t.match(failure('dn = 443abc'), { position: 5 });
  t.match(failure('and'), { position: 0 });
  t.match(failure('dn exists and'), { position: 13 });
  t.match(failure('dn exists or or team exists'), { position: 13 });
  t.match(failure('()'), { position: 1 });
  t.match(failure('dn = now()'), { position: 8 });
  t.match(failure('dn; DROP TABLE x'), { position: 2 });
  t.match(failure('\u0000'), { position: 0 });
  t.match(failure('dn = "x" -- comment'), { position: 9 });
  t.match(failure('/* c */ dn = "x"'), { position: 0 });
  t.match(failure('status is valid)'), { position: 15 });
});

t.test('limits: length, nesting, stack', async (t) => {
  t.match(failure(`dn = "${'x'.repeat(1_000_001)}"`), { message: /longer than 1000000 characters/ });
  t.match(failure(`dn = "${'x'.repeat(2_000_000)}"`), { error: 'HQL-001' });
  const deep = (n: number) => '('.repeat(n) + 'dn exists' + ')'.repeat(n);
  t.ok(parse(deep(64)), '64 levels of parentheses');
  t.match(failure(deep(65)), { message: /more than 64 nested/, position: 64 });
  t.match(failure(deep(10_000)), { message: /more than 64 nested/, position: 64 });
  t.ok(parse('not '.repeat(64) + 'dn exists'), '64 nots');
  t.match(failure('not '.repeat(65) + 'dn exists'), { position: 256 });
  t.match(failure('not '.repeat(10_000) + 'dn exists'), { message: /more than 64 nested/ });
  t.match(failure('! '.repeat(10_000) + 'dn exists'), { message: /more than 64 nested/ });
  t.match(failure('!'.repeat(10_000) + 'dn exists'), { message: /more than 64 nested/ });
  t.match(failure('not ('.repeat(40) + 'dn exists' + ')'.repeat(40)), { message: /more than 64 nested/ }, 'parentheses and nots count together');
  const list = parse(`dn in [${Array.from({ length: 10_000 }, (_, i) => `"v${i}"`).join(', ')}]`) as Extract<QueryNode, { kind: 'compare' }>;
  t.equal(list.values.length, 10_000, '10,000-element lists');
  const wide = parse(Array.from({ length: 5000 }, (_, i) => `team = "t${i}"`).join(' or ')) as Extract<QueryNode, { kind: 'or' }>;
  t.equal(wide.children.length, 5000, 'long or-chains are one flat node');
});

t.test('parsed trees are cached per language and text', async (t) => {
  const a = parse('team = "cache-me"');
  t.equal(parse('team = "cache-me"'), a, 'same object');
  t.not(parseQuery('team = "cache-me"', { ...L }), a, 'another language table parses again');
});

t.test('dictionary and field lookups', async (t) => {
  const dictionary = queryDictionary(L);
  const dn = dictionary.find((e) => e.kind === 'field' && e.name === 'dn');
  t.match(dn, { kind: 'field', name: 'dn', type: 'string', operators: ['equals', 'not equals', 'matches', 'contains', 'in', 'not in', 'within', 'exists', 'not exists'], property: 'dn' });
  t.match(dictionary.find((e) => e.name === 'label'), { kind: 'field', parametric: true });
  t.match(dictionary.find((e) => e.name === 'revocation.reason'), { values: ['unspecified', 'keycompromise'] });
  t.same(dictionary.find((e) => e.name === 'status is'), {
    kind: 'special',
    name: 'status is',
    subject: 'status',
    verb: 'is',
    negation: 'not',
    values: ['valid', 'expired', 'revoked'],
    description: L.specials[0]!.description,
  });
  t.match(dictionary.find((e) => e.name === 'trigger.results has'), { negation: 'no', values: ['success', 'failure', 'warning'] });
  t.equal(dictionary.length, L.fields.length + L.specials.length);
  t.equal(JSON.parse(JSON.stringify(dictionary)).length, dictionary.length, 'plain JSON');

  t.equal(fieldByName(L, 'valid.until')?.property, 'notAfter');
  t.equal(fieldByName(L, 'Valid.Until')?.property, 'notAfter');
  t.equal(fieldByName(L, 'label.env')?.name, 'label');
  t.equal(fieldByName(L, 'nope'), undefined);
  t.equal(fieldByProperty(L, 'notAfter')?.name, 'valid.until');
  t.equal(fieldByProperty(L, 'contactEmail')?.name, 'contactemail');
  t.equal(fieldByProperty(L, '_id')?.name, 'id');
  t.equal(fieldByProperty(L, 'valid.until')?.name, 'valid.until', 'query names work too');
  t.equal(fieldByProperty(L, 'nope'), undefined);
});
