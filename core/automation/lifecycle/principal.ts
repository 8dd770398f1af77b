import { lifecyclePermission } from '../../security/permissions/catalogue.js';
import { PermissionSet } from '../../security/permissions/permission-set.js';
import type { ResolvedPrincipal } from '../../security/principals/resolver.js';
import type { CertificateProfile } from '../../profiles/types.js';
import type { AutomationPolicy } from '../policies/model.js';

/**
 * Who the lifecycle task acts as: `automation:<policy>`, holding exactly the rights its work needs on the
 * policy's profile — renew and revoke (direct, or request only when the policy wants renewals approved), and
 * approve, which lets it cancel the profile's stale requests. Its requests and events name it.
 */
export function automationPrincipal(tenant: string, policy: AutomationPolicy, profile: CertificateProfile): ResolvedPrincipal {
  const renew = policy.requireApproval ? 'request' : 'direct';
  return {
    identifier: `automation:${policy.name}`,
    name: `Automation policy ${policy.name}`,
    email: null,
    tenant,
    identityProviderName: 'automation',
    identityProviderType: 'automation',
    permissions: new PermissionSet([
      { value: lifecyclePermission(profile.module, profile.name, 'renew', renew) },
      { value: lifecyclePermission(profile.module, profile.name, 'revoke', 'direct') },
      { value: lifecyclePermission('*', profile.name, '*', 'approve') },
    ]),
    ownPermissions: [],
    roles: [],
    teams: [],
    preferences: {},
  };
}
