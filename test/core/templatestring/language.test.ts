/**
 * The computation rule language (core/templatestring), DB-free: the vendor's documented examples give the
 * vendor's answers, errors carry their position, and every bound (length, depth, steps, output size, regular
 * expressions) fails fast with a clear error — never a hang or a stack overflow.
 */
import t from 'tap';
import { computeTemplate, parseTemplate, positionOf, TemplateError, unboundedRepetitions, type Mode } from '../../../core/templatestring/evaluate.js';
import { TEMPLATE_LIMITS } from '../../../core/templatestring/limits.js';

const data = {
  'csr.subject.cn': 'Web01.Corp.Example.com',
  'csr.san.dnsname': ['web01.corp.example.com', 'www.example.com', 'web01.corp.example.com'],
  email: 'alice@example.com',
  sam: 'CORP\\alice',
  fqdn: 'machine.domain.local',
  sans: { dns: ['a.example', 'b.example'] },
  metadata: { owner: 'Bob', count: 3, flag: true },
  nested: { deep: { object: { x: 1 } } },
};

const cases: [string, Mode, unknown][] = [
  // The vendor's documented examples (horizon-mcp computation knowledge resource and playground tests).
  ['Upper("string")', 'rule', 'STRING'],
  ['Lower("STRING")', 'rule', 'string'],
  ['Trim(" STRING")', 'rule', 'STRING'],
  ['Substr("STRING", 2)', 'rule', 'TRING'],
  ['Concat("start", " middle ", "end")', 'rule', 'start middle end'],
  ['Extract("user@domain", "(.*)@", 1)', 'rule', 'user'],
  ['Replace("abcdATdomain.com", "AT", "@")', 'rule', 'abcd@domain.com'],
  ['OrElse({{missing}}, "fallback")', 'rule', 'fallback'],
  ['Match("abcd", "[a-z]+")', 'rule', 'abcd'],
  ['Get(["str1", "str2", "str3"], -2)', 'rule', 'str2'],
  ['First(["str1", "str2"])', 'rule', 'str1'],
  ['Last(["str1", "str2"])', 'rule', 'str2'],
  ['Join(["str1", "str2"], ".")', 'rule', 'str1.str2'],
  ['Filter(["string1", "match"], "[a-z]+")', 'rule', ['match']],
  ['Slice(["a", "b", "c"], 1, 3)', 'rule', ['a', 'b', 'c']],
  ['Sort(["b", "a"])', 'rule', ['a', 'b']],
  ['Split("str1.str2", ".")', 'rule', ['str1', 'str2']],
  ['ShortenDNS("subdomain.domain.com")', 'rule', 'subdomain'],
  ['DomainDNS("subdomain.domain.com")', 'rule', 'domain.com'],
  ['EmailUser("user@domain.com")', 'rule', 'user'],
  ['EmailDomain("user@domain.com")', 'rule', 'domain.com'],
  ['SamAccountNameUser("DOMAIN\\\\User")', 'rule', 'User'],
  ['SamAccountNameDomain("DOMAIN\\\\User")', 'rule', 'DOMAIN'],
  ['{{owner}}', 'rule', null],
  ['DomainDNS({{fqdn}})', 'rule', 'domain.local'],
  ['Concat(OrElse({{prefix}}, "default"), "-", {{fqdn}})', 'rule', 'default-machine.domain.local'],
  ['Concat({{missing}}, "x")', 'rule', null],
  // Paths: flat keys, nested objects, indexes (0-based; negative from the end), numbers and booleans as text.
  ['{{csr.subject.cn}}', 'rule', 'Web01.Corp.Example.com'],
  ['[[csr.san.dnsname]]', 'rule', ['web01.corp.example.com', 'www.example.com', 'web01.corp.example.com']],
  ['{{csr.san.dnsname}}', 'rule', 'web01.corp.example.com'],
  ['{{csr.san.dnsname[1]}}', 'rule', 'www.example.com'],
  ['{{csr.san.dnsname.-1}}', 'rule', 'web01.corp.example.com'],
  ['{{sans.dns[0]}}', 'rule', 'a.example'],
  ['Lower({{metadata.owner}})', 'rule', 'bob'],
  ['{{metadata.count}}', 'rule', '3'],
  ['{{metadata.flag}}', 'rule', 'true'],
  ['Sort(Unique([[csr.san.dnsname]]))', 'rule', ['web01.corp.example.com', 'www.example.com']],
  ['Upper([[sans.dns]])', 'rule', ['A.EXAMPLE', 'B.EXAMPLE']],
  ['Concat([[sans.dns]], ["c.example"])', 'rule', ['a.example', 'b.example', 'c.example']],
  ['Split({{email}}, "@", 1)', 'rule', 'example.com'],
  ['Default({{nothing}}, NULL, "third")', 'rule', 'third'],
  ['Substring("certificate", 1, 4)', 'rule', 'cert'],
  ['Replace({{csr.subject.cn}}, "\\\\.", "-")', 'rule', 'Web01-Corp-Example-com'],
  ['Extract([[csr.san.dnsname]], "^www\\\\.(.*)$", 1)', 'rule', ['example.com']],
  ['NULL', 'rule', null],
  ['  Upper( "x" , )', 'rule', 'error'],
  // Template strings: free text, {{ }} blocks (a path or an expression), [[ ]] joined with ", ".
  ['web-{{csr.subject.cn}}', 'template', 'web-Web01.Corp.Example.com'],
  ['Hello {{Upper({{metadata.owner}})}}, SANs: [[sans.dns]]', 'template', 'Hello BOB, SANs: a.example, b.example'],
  ['{{missing}}|{{ Lower("A") }}|', 'template', '|a|'],
  ['no blocks at all', 'template', 'no blocks at all'],
];

for (const [rule, mode, expected] of cases) {
  t.test(`${mode}: ${rule}`, async (t) => {
    if (expected === 'error') {
      t.throws(() => computeTemplate(rule, mode, data), TemplateError);
      return;
    }
    t.same(computeTemplate(rule, mode, data), expected);
  });
}

t.test('NOW is the evaluation clock, as ISO 8601', async (t) => {
  t.equal(computeTemplate('NOW', 'rule', {}, { now: () => Date.UTC(2030, 0, 2, 3, 4, 5) }), '2030-01-02T03:04:05.000Z');
});

const failure = (rule: string, mode: Mode = 'rule', input: Record<string, unknown> = data): TemplateError => {
  try {
    computeTemplate(rule, mode, input);
  } catch (err) {
    if (err instanceof TemplateError) return err;
    throw err;
  }
  throw new Error(`${rule} did not fail`);
};

t.test('errors carry their kind and position (offset, line, column)', async (t) => {
  const syntax = failure('Concat(\n  {{a}},\n  "unterminated)');
  t.equal(syntax.kind, 'syntax');
  t.same(syntax.positionIn('Concat(\n  {{a}},\n  "unterminated)'), { offset: 33, line: 3, column: 17 }, 'at the end of the unterminated string');
  const unclosed = failure('Upper({{x}');
  t.same([unclosed.kind, unclosed.offset], ['syntax', 9], 'the lookup is not closed at offset 9');
  const unknown = failure('Concat("a", Shout({{x}}))');
  t.same([unknown.kind, unknown.offset], ['evaluation', 12], 'the unknown function, where it is called');
  t.match(unknown.message, /unknown function Shout/);
  const args = failure('Upper("a", "b")');
  t.match(args.message, 'Upper takes 1 argument, not 2');
  const object = failure('Upper({{nested.deep}})');
  t.same([object.kind, object.offset], ['evaluation', 6]);
  t.match(object.message, 'nested.deep is not a value');
  const integer = failure('Get([[sans.dns]], "first")');
  t.match(integer.message, 'Get: expected an integer');
  const badRegex = failure('Replace({{email}}, "(", "")');
  t.same([badRegex.kind, badRegex.offset], ['evaluation', 19], 'the pattern argument');
  t.same(positionOf('ab\ncd', 4), { offset: 4, line: 2, column: 2 });
  t.same(failure('x {{ Upper( }} y', 'template').kind, 'syntax', 'an unclosed call in a template block');
  t.same(failure('Upper("x") trailing').kind, 'syntax', 'text after the expression');
});

t.test('prototype properties are not data', async (t) => {
  t.equal(computeTemplate('{{constructor}}', 'rule', {}), null);
  t.equal(computeTemplate('{{__proto__}}', 'rule', {}), null);
  t.equal(computeTemplate('{{a.toString}}', 'rule', { a: {} }), null);
});

t.test('limits: clear errors, fast, never a hang', async (t) => {
  const fast = (what: string, fn: () => TemplateError, kind: string, match: RegExp | string) => {
    const started = performance.now();
    const err = fn();
    const took = performance.now() - started;
    t.equal(err.kind, kind, `${what}: ${kind}`);
    t.match(err.message, match, `${what}: ${err.message}`);
    t.ok(took < 1000, `${what}: refused in ${took.toFixed(1)} ms`);
  };
  fast('a huge rule', () => failure(`"${'x'.repeat(TEMPLATE_LIMITS.maxLength)}"`), 'limit', /limited to 4096 characters/);
  fast('a huge template', () => failure('x'.repeat(1_000_000), 'template'), 'limit', /limited to 4096 characters/);
  fast('deep nesting', () => failure(`${'Upper('.repeat(500)}"x"${')'.repeat(500)}`), 'limit', /nesting deeper than 32/);
  fast('deep list nesting', () => failure(`${'['.repeat(600)}"x"${']'.repeat(600)}`), 'limit', /nesting deeper than 32/);
  t.equal(failure(`${'Upper('.repeat(40)}"x"${')'.repeat(40)}`).offset, 6 * 32, 'the position of the first level too deep');
  t.equal(computeTemplate(`${'Upper('.repeat(32)}"x"${')'.repeat(32)}`, 'rule', {}), 'X', '32 levels are fine');
  // Output doubling: 2^n characters in n nested Concats would pass the length bound without the size bound.
  const doubling = (n: number): string => (n === 0 ? '{{big}}' : `Concat(${doubling(n - 1)}, ${doubling(n - 1)})`);
  fast('output growth', () => failure(doubling(6), 'rule', { big: 'x'.repeat(5000) }), 'limit', /exceeds 65536 characters/);
  const wide = `Concat(${Array.from({ length: 500 }, () => 'Split("a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a", ",")').join(',')})`.slice(0, 4000);
  fast('too many steps or items', () => failure(`${wide.slice(0, wide.lastIndexOf(',Split'))})`), 'limit', /exceeds|items/);
  fast('a big list in the data', () => failure('[[many]]', 'rule', { many: Array.from({ length: 5000 }, (_, i) => String(i)) }), 'limit', /more than 1000 values/);
  // Regular expressions: nested or ambiguous repetition refused before running; long subjects refused.
  fast('catastrophic (a+)+', () => failure('Match({{s}}, "(a+)+$")', 'rule', { s: `${'a'.repeat(40)}!` }), 'evaluation', /catastrophic/);
  fast('catastrophic (a|aa)*', () => failure('Replace({{s}}, "(a|aa)*b", "")', 'rule', { s: 'a'.repeat(40) }), 'evaluation', /catastrophic/);
  fast('three unbounded repetitions', () => failure('Match({{s}}, ".*a.*a.*x")', 'rule', { s: 'a'.repeat(200) }), 'limit', /at most 2 unbounded/);
  fast('backreference', () => failure('Extract({{s}}, "(a)\\\\1", 0)', 'rule', { s: 'aa' }), 'evaluation', /./);
  fast('a long subject with two repetitions', () => failure('Match({{s}}, ".*.*x")', 'rule', { s: 'a'.repeat(300) }), 'limit', /at most 256 characters/);
  const started = performance.now();
  t.equal(computeTemplate('Match({{s}}, ".*.*x")', 'rule', { s: 'a'.repeat(256) }), null, 'the worst allowed case answers');
  t.ok(performance.now() - started < 500, 'and quickly');
  t.equal(unboundedRepetitions('a{1,40}b{2}[*+]\\*c+'), 2, 'counts {n,m} with m > 32 and +, not escaped or in classes');
});

t.test('parse gives a tree with offsets, no code', async (t) => {
  t.match(parseTemplate('Upper({{a.b}})', 'rule'), { kind: 'call', name: 'Upper', offset: 0, args: [{ kind: 'lookup', multi: false, path: ['a', 'b'], offset: 6 }] });
  t.match(parseTemplate('x{{a}}', 'template'), { kind: 'template', parts: [{ kind: 'text', text: 'x' }, { kind: 'block', offset: 1 }] });
  t.equal(computeTemplate('Upper("process.exit(1)")', 'rule', {}), 'PROCESS.EXIT(1)', 'strings are data');
});
