import t from 'tap';
import type { Kernel } from '../../../core/kernel.js';
import type { ResolvedPrincipal } from '../../../core/security/principals/resolver.js';
import type { Permission } from '../../../core/security/permissions/permission-set.js';
import { normalizeProfile } from '../../../core/profiles/validate.js';
import { createPrincipal } from '../../helpers/security.js';
import { admin, bootProfiles } from './fixture.js';

async function principal(kernel: Kernel, identifier: string, options: { permissions?: Permission[]; roles?: string[]; teams?: { name: string }[] } = {}): Promise<ResolvedPrincipal> {
  await createPrincipal(kernel, identifier, options);
  return kernel.security.resolver.resolve({ identifier, tenant: 'default', identityProviderName: 'local', identityProviderType: 'local' });
}

t.test('rightsOf: lifecycle permissions and the profile authorization lists', async (t) => {
  const { kernel, profiles } = await bootProfiles(t);
  const call = admin(kernel);
  t.equal((await call('POST', '/api/v1/security/roles/', { name: 'operators', permissions: [] })).statusCode, 201);
  t.equal((await call('POST', '/api/v1/security/teams/', { name: 'web-team' })).statusCode, 201);

  const profile = normalizeProfile({
    name: 'web',
    pkiConnector: 'ca',
    authorizations: {
      workflows: { enroll: { direct: ['role:operators'], request: ['team:web-team', 'erin'] }, revoke: { request: ['*'] } },
      approve: ['role:operators', 'frank'],
    },
  });
  const nobody = await principal(kernel, 'nobody');
  const direct = await principal(kernel, 'direct', { permissions: [{ value: 'lifecycle:webra:web:enroll:direct' }] });
  const request = await principal(kernel, 'request', { permissions: [{ value: 'lifecycle:webra:web:enroll:request' }] });
  const approver = await principal(kernel, 'approver', { permissions: [{ value: 'lifecycle:webra:web:enroll:approve' }] });
  const wildcard = await principal(kernel, 'wildcard', { permissions: [{ value: 'lifecycle:webra:*' }] });
  const otherProfile = await principal(kernel, 'other', { permissions: [{ value: 'lifecycle:webra:mail:enroll:direct' }, { value: 'lifecycle:scep:web:enroll:direct' }] });
  const operator = await principal(kernel, 'operator', { roles: ['operators'] });
  const member = await principal(kernel, 'member', { teams: [{ name: 'web-team' }] });
  const erin = await principal(kernel, 'erin');
  const frank = await principal(kernel, 'frank');
  const ghostRole = await principal(kernel, 'ghost', { roles: ['no-such-role'] });

  const r = (p: ResolvedPrincipal, workflow: 'enroll' | 'revoke' | 'renew' = 'enroll') => profiles.rightsOf(profile, p, workflow);
  t.same(r(nobody), { direct: false, request: false, approve: false });
  t.same(r(direct), { direct: true, request: true, approve: false }, 'direct implies request');
  t.same(r(request), { direct: false, request: true, approve: false });
  t.same(r(approver), { direct: false, request: false, approve: true });
  t.same(r(approver, 'renew'), { direct: false, request: false, approve: false }, 'the approve permission is per workflow');
  t.same(r(wildcard, 'renew'), { direct: true, request: true, approve: true });
  t.same(r(otherProfile), { direct: false, request: false, approve: false }, 'another profile or module grants nothing here');
  t.same(r(operator), { direct: true, request: true, approve: true }, 'role: in the direct and approve lists');
  t.same(r(operator, 'renew'), { direct: false, request: false, approve: true }, 'the approve list covers every workflow');
  t.same(r(member), { direct: false, request: true, approve: false }, 'team: in the request list');
  t.same(r(erin), { direct: false, request: true, approve: false }, 'an identifier in the request list');
  t.same(r(frank), { direct: false, request: false, approve: true });
  t.same(r(nobody, 'revoke'), { direct: false, request: true, approve: false }, '* is any authenticated principal');
  t.same(r(ghostRole), { direct: false, request: false, approve: false }, 'a role that does not exist grants nothing');

  const mail = normalizeProfile({ name: 'mail', module: 'est', pkiConnector: 'ca' });
  const est = await principal(kernel, 'est-user', { permissions: [{ value: 'lifecycle:est:mail:enroll:direct' }] });
  t.same(profiles.rightsOf(mail, est, 'enroll'), { direct: true, request: true, approve: false }, "the profile's module is in the permission");
  t.same(profiles.rightsOf(mail, direct, 'enroll'), { direct: false, request: false, approve: false });
});
