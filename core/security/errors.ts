import type { CatalogueEntry } from '../errors/catalogue.js';

/**
 * Error codes of the security core. Suffixes follow the convention clients map (client-compat §6):
 * 002 validation, 003 not found, 004 already exists, 005 referenced / refused by a rule.
 */
export const SECURITY_ERRORS = {
  'SEC-RATE-001': { status: 429, title: 'Too many failed logins', message: 'Too many failed logins: retry later' },
  'SEC-IDP-002': { status: 400, title: 'Invalid identity provider', message: 'The identity provider is not valid' },
  'SEC-IDP-003': { status: 404, title: 'Identity provider not found', message: 'No identity provider has this name' },
  'SEC-IDP-004': { status: 400, title: 'Identity provider exists', message: 'An identity provider with this name already exists' },
  'SEC-IDP-005': { status: 400, title: 'Identity provider required', message: 'At least one identity provider must stay enabled' },
  'SEC-LOCAL-002': { status: 400, title: 'Invalid local identity', message: 'The local identity is not valid' },
  'SEC-LOCAL-003': { status: 404, title: 'Local identity not found', message: 'No local identity has this identifier' },
  'SEC-LOCAL-004': { status: 400, title: 'Local identity exists', message: 'A local identity with this identifier already exists' },
  'SEC-LOCAL-005': { status: 400, title: 'Password refused', message: 'The password does not satisfy the password policy' },
  'SEC-LOCAL-006': { status: 400, title: 'Wrong current password', message: 'The current password is not correct' },
  'SEC-PWD-002': { status: 400, title: 'Invalid password policy', message: 'The password policy is not valid' },
  'SEC-PWD-003': { status: 404, title: 'Password policy not found', message: 'No password policy has this name' },
  'SEC-PWD-004': { status: 400, title: 'Password policy exists', message: 'A password policy with this name already exists' },
  'SEC-PWD-005': { status: 400, title: 'Password policy required', message: 'This password policy is in use and cannot be removed' },
  'SEC-ROLE-002': { status: 400, title: 'Invalid role', message: 'The role is not valid' },
  'SEC-ROLE-003': { status: 404, title: 'Role not found', message: 'No role has this name' },
  'SEC-ROLE-004': { status: 400, title: 'Role exists', message: 'A role with this name already exists' },
  'SEC-TEAM-002': { status: 400, title: 'Invalid team', message: 'The team is not valid' },
  'SEC-TEAM-003': { status: 404, title: 'Team not found', message: 'No team has this name' },
  'SEC-TEAM-004': { status: 400, title: 'Team exists', message: 'A team with this name already exists' },
  'SEC-TEAM-005': { status: 400, title: 'Team managed externally', message: 'This team is managed by an external directory' },
  'SEC-SVA-002': { status: 400, title: 'Invalid service account', message: 'The service account is not valid' },
  'SEC-SVA-003': { status: 404, title: 'Service account not found', message: 'No service account has this name' },
  'SEC-SVA-004': { status: 400, title: 'Service account exists', message: 'A service account with this name already exists' },
  'SEC-PRINC-002': { status: 400, title: 'Invalid principal information', message: 'The principal information is not valid' },
  'SEC-PRINC-003': { status: 404, title: 'Principal not found', message: 'No principal information has this identifier' },
  'SEC-PRINC-004': { status: 400, title: 'Principal information exists', message: 'Principal information with this identifier already exists' },
  'SEC-QUERY-002': { status: 400, title: 'Invalid saved query', message: 'The saved query is not valid' },
  'SEC-QUERY-003': { status: 404, title: 'Saved query not found', message: 'No saved query has this name' },
  'SEC-DASH-002': { status: 400, title: 'Invalid dashboard', message: 'The dashboard is not valid' },
  'SEC-DASH-003': { status: 404, title: 'Dashboard not found', message: 'No dashboard has this name' },
  'SEC-DASH-004': { status: 400, title: 'Dashboard exists', message: 'A dashboard with this name already exists' },
  'SEC-PREF-002': { status: 400, title: 'Invalid preferences', message: 'The preferences are not valid' },
} as const satisfies Record<string, CatalogueEntry>;
