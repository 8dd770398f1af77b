import { lifecyclePermission } from '../security/permissions/catalogue.js';
import type { ResolvedPrincipal } from '../security/principals/resolver.js';
import type { CertificateProfile, Rights, Workflow } from './types.js';

/**
 * The list entry for a certificate's holder proving possession of its key (X-JWT-CERT-POP): granted on renew,
 * revoke or update, it lets the holder act on that certificate alone (the workflow checks which one).
 */
export const HOLDER_POP = 'holder:pop';
export const HOLDER_POP_WORKFLOWS: readonly Workflow[] = ['renew', 'revoke', 'update'];

/**
 * Whether an authorization list names the principal: its identifier, `role:<r>` it holds, `team:<t>` it is in,
 * or `*`. A proof-of-possession holder is named by `holder:pop` only (not even by `*`: it is nobody's account).
 */
export function listNames(list: readonly string[] | undefined, principal: ResolvedPrincipal): boolean {
  if (!list || list.length === 0) return false;
  if (principal.identityProviderType === 'pop') return list.includes(HOLDER_POP);
  for (const entry of list) {
    if (entry === '*') return true;
    if (entry.startsWith('role:')) {
      if (principal.roles.includes(entry.slice(5))) return true;
    } else if (entry.startsWith('team:')) {
      const team = entry.slice(5);
      if (principal.teams.some((t) => t.name === team)) return true;
    } else if (entry === principal.identifier) return true;
  }
  return false;
}

/**
 * What a principal may do with a workflow on a profile: `lifecycle:<module>:<profile>:<workflow>:<right>`
 * permissions (direct implies request), or the profile's own authorization lists (a `direct` entry implies
 * request too). Approving: the lifecycle approve permission of the workflow, or the profile's `approve` list
 * (every workflow).
 */
export function rightsOf(profile: CertificateProfile, principal: ResolvedPrincipal, workflow: Workflow): Rights {
  const allows = (right: 'direct' | 'request' | 'approve'): boolean => principal.permissions.allows(lifecyclePermission(profile.module, profile.name, workflow, right));
  const lists = profile.authorizations.workflows[workflow];
  const direct = allows('direct') || listNames(lists?.direct, principal);
  const request = direct || allows('request') || listNames(lists?.request, principal);
  const approve = allows('approve') || listNames(profile.authorizations.approve, principal);
  return { direct, request, approve };
}
