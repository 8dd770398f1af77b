import t from 'tap';
import { permissionValueProblem } from '../../../core/security/permissions/catalogue.js';
import { PermissionSet } from '../../../core/security/permissions/permission-set.js';

t.test('a permission covers what its segments and wildcards say', async (t) => {
  const cases: [string, string, boolean][] = [
    ['*', 'configuration:scheduler:write', true],
    ['*', 'lifecycle:webra:servers:enroll:approve', true],
    ['configuration:*', 'configuration:roles:write', true],
    ['configuration:*', 'search:certificates', false],
    ['configuration:*:read', 'configuration:teams:read', true],
    ['configuration:*:read', 'configuration:teams:write', false],
    ['configuration:scheduler:write', 'configuration:scheduler:read', true],
    ['configuration:scheduler:read', 'configuration:scheduler:write', false],
    ['configuration:scheduler:write', 'configuration:schedulers:read', false],
    ['lifecycle:webra:servers:enroll:direct', 'lifecycle:webra:servers:enroll:request', true],
    ['lifecycle:webra:servers:enroll:request', 'lifecycle:webra:servers:enroll:direct', false],
    ['lifecycle:webra:*:enroll:request', 'lifecycle:webra:laptops:enroll:request', true],
    ['lifecycle:webra:*:enroll:request', 'lifecycle:est:laptops:enroll:request', false],
    ['lifecycle:*', 'lifecycle:acme:web:revoke:approve', true],
    ['lifecycle:webra:servers:*', 'lifecycle:webra:servers:revoke:approve', true],
    ['lifecycle:webra:servers:*', 'lifecycle:webra:laptops:revoke:approve', false],
    ['search:certificates', 'search:certificates', true],
    ['search:certificates', 'search:requests', false],
    ['discovery:feed:dc-paris', 'discovery:feed:dc-paris', true],
    ['discovery:feed:dc-paris', 'discovery:feed:dc-lyon', false],
    ['discovery:feed:*', 'discovery:feed:dc-lyon', true],
    ['configuration:scheduler', 'configuration:scheduler:read', false],
  ];
  for (const [granted, required, expected] of cases) {
    t.equal(new PermissionSet([{ value: granted }]).allows(required), expected, `${granted} ${expected ? 'covers' : 'does not cover'} ${required}`);
  }
  t.equal(new PermissionSet([]).allows('configuration:scheduler:read'), false, 'no permission covers nothing');
});

t.test('filters narrow search permissions; an unfiltered grant covers everything', async (t) => {
  const filtered = new PermissionSet([
    { value: 'search:certificates', filter: 'team equals "paris"' },
    { value: 'search:*', filter: 'profile equals "servers"' },
    { value: 'configuration:labels:read' },
  ]);
  t.same(filtered.filtersFor('search:certificates'), ['team equals "paris"', 'profile equals "servers"'], 'any of the filters admits');
  t.same(filtered.filtersFor('search:events'), ['profile equals "servers"']);
  t.equal(filtered.filtersFor('configuration:labels:read'), null, 'no filter: everything');
  t.same(filtered.filtersFor('configuration:roles:read'), [], 'not covered: nothing');
  const mixed = new PermissionSet([{ value: 'search:certificates', filter: 'team equals "x"' }, { value: 'search:certificates' }]);
  t.equal(mixed.filtersFor('search:certificates'), null, 'an unfiltered grant wins over filtered ones');
});

t.test('permission values are checked when granted', async (t) => {
  for (const ok of ['*', 'configuration:*', 'configuration:roles:read', 'configuration:*:write', 'lifecycle:webra:servers:enroll:direct', 'lifecycle:*', 'lifecycle:webra:*', 'search:events', 'search:*', 'discovery:feed:campaign-1', 'discovery:*']) {
    t.equal(permissionValueProblem(ok), null, `${ok} is valid`);
  }
  const bad: [string, RegExp][] = [
    ['admin', /unknown group "admin"/],
    ['configuration:rolez:read', /unknown segment "rolez"/],
    ['configuration:roles:delete', /unknown segment "delete"/],
    ['configuration:roles', /incomplete/],
    ['configuration:roles:read:extra', /more than 3 segments/],
    ['lifecycle:webra:servers:teleport:direct', /unknown segment "teleport"/],
    ['lifecycle:webra:servers:enroll:maybe', /unknown segment "maybe"/],
    ['search:everything', /unknown segment "everything"/],
    ['discovery:push:x', /discovery:feed:<campaign>/],
    ['configuration:ro les:read', /unknown segment/],
    ['x'.repeat(600), /longer than 512/],
  ];
  for (const [value, reason] of bad) t.match(permissionValueProblem(value), reason, `${value.slice(0, 40)} is refused`);
});
