/** Lookup() in computation rules, on tables given directly: no database, no network. */
import t from 'tap';
import { indexed } from '../../../core/datasources/lookup.js';
import { computeTemplate, lookupsIn, parseTemplate, TemplateError, type LookupTables } from '../../../core/templatestring/evaluate.js';

const hosts = indexed(
  [
    { hostname: 'web1.example.com', owner: 'alice', tags: ['a', 'b'], meta: { site: 'PAR' } },
    { hostname: 'DB1.example.com', owner: 'bob', port: 5432 },
    { hostname: ['alias1', 'alias2'], owner: 'multi' },
  ],
  'hostname',
);
const tables: LookupTables = { table: (name) => (name === 'cmdb' ? hosts : `no datasource is named "${name}"`) };
const rule = (text: string, data: Record<string, unknown> = {}) => computeTemplate(text, 'rule', data, { lookups: tables });

t.test('values, lists, paths, case and misses', async (t) => {
  t.equal(rule('Lookup("cmdb", "web1.example.com", "owner")'), 'alice');
  t.equal(rule('Lookup("cmdb", "db1.example.com", "owner")'), 'bob', 'case-insensitive key');
  t.equal(rule('Lookup("cmdb", "db1.example.com", "port")'), '5432', 'numbers as text');
  t.equal(rule('Lookup("cmdb", "web1.example.com", "meta.site")'), 'PAR', 'a dotted path');
  t.same(rule('Lookup("cmdb", "web1.example.com", "tags")'), ['a', 'b'], 'an array field');
  t.equal(rule('Lookup("cmdb", "alias2", "owner")'), 'multi', 'a multi-valued key field');
  t.same(rule('Lookup("cmdb", [[h]], "owner")', { h: ['web1.example.com', 'nope', 'alias1'] }), ['alice', 'multi'], 'a list of keys');
  t.equal(rule('Lookup("cmdb", "nope", "owner")'), null);
  t.equal(rule('Lookup("cmdb", {{missing}}, "owner")'), null, 'a NULL key');
});

t.test('refusals are evaluation errors with a position', async (t) => {
  const fails = (text: string, message: RegExp, options = { lookups: tables }) => {
    try {
      computeTemplate(text, 'rule', {}, options);
      t.fail(`${text} should fail`);
    } catch (err) {
      t.type(err, TemplateError);
      t.match((err as TemplateError).message, message, text);
      t.equal((err as TemplateError).kind, 'evaluation');
    }
  };
  fails('Lookup("other", "x", "owner")', /no datasource is named "other"/);
  fails('Lookup(Upper("cmdb"), "x", "owner")', /must be a quoted name/);
  fails('Lookup("cmdb", "web1.example.com", "meta")', /not a value/);
  fails('Lookup("cmdb", "x")', /takes 3 arguments/);
  fails('Lookup("cmdb", "x", "owner")', /no datasource can be read here/, {} as { lookups: LookupTables });
});

t.test('lookupsIn names the datasources a rule reads, before it runs', async (t) => {
  t.same(lookupsIn(parseTemplate('Concat(Lookup("a", {{x}}, "f"), OrElse(Lookup("b", "k", "g"), Lookup("a", "z", "h")))', 'rule')).sort(), ['a', 'b']);
  t.same(lookupsIn(parseTemplate('host-{{Lookup("cmdb", {{cn}}, "owner")}} [[x]]', 'template')), ['cmdb']);
  t.same(lookupsIn(parseTemplate('Upper({{x}})', 'rule')), []);
});
