/**
 * The permission values the platform knows (DESIGN.md §3). A permission is `{value, filter?}`; the value
 * is colon-separated segments, `*` in a granted segment matches any one segment and a trailing `*`
 * matches the rest, so `*` alone is every permission.
 *
 * - `configuration:<section>:read|write` — configuration objects of one section (write implies read).
 * - `lifecycle:<module>:<profile>:<workflow>:direct|request|approve` — certificate workflows on a
 *   profile; `direct` completes at once, `request` opens a pending request (direct implies request),
 *   `approve` decides others' requests.
 * - `search:certificates|requests|events|discovery-events` — searches; the filter (a certificate
 *   query) narrows what a search permission covers.
 * - `discovery:feed:<campaign>` — pushing to a discovery campaign.
 */
export const CONFIGURATION_SECTIONS = [
  'acme',
  'automation',
  'cas',
  'credentials',
  'datasources',
  'dcv',
  'discovery',
  'grading',
  'identities',
  'identity-providers',
  'labels',
  'licenses',
  'password-policies',
  'pki',
  'principals',
  'profiles',
  'proxies',
  'reports',
  'roles',
  'scheduler',
  'scim',
  'service-accounts',
  'system',
  'teams',
  'tenants',
  'third-party',
  'triggers',
  'wcce',
] as const;

export type ConfigurationSection = (typeof CONFIGURATION_SECTIONS)[number];

export const LIFECYCLE_WORKFLOWS = ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'] as const;
export const LIFECYCLE_RIGHTS = ['direct', 'request', 'approve'] as const;
export const SEARCH_SCOPES = ['certificates', 'requests', 'events', 'discovery-events'] as const;

/** A configuration permission value: `configuration:<section>:<read|write>`. */
export const configurationPermission = (section: ConfigurationSection, action: 'read' | 'write'): string =>
  `configuration:${section}:${action}`;

export const lifecyclePermission = (module: string, profile: string, workflow: string, right: (typeof LIFECYCLE_RIGHTS)[number]): string =>
  `lifecycle:${module}:${profile}:${workflow}:${right}`;

const SEGMENT = /^[A-Za-z0-9._@-]+$/;
const ok = (segment: string, allowed?: readonly string[]): boolean =>
  segment === '*' || (allowed ? allowed.includes(segment) : SEGMENT.test(segment));

/**
 * Why a permission value cannot be granted, or null when it is well formed. Checked when roles and
 * principals are written, so a typo is refused instead of silently granting nothing.
 */
export function permissionValueProblem(value: string): string | null {
  if (value === '*') return null;
  if (value.length > 512) return 'is longer than 512 characters';
  const parts = value.split(':');
  const [group, ...rest] = parts;
  const tail = (n: number, check: (i: number, s: string) => boolean): string | null => {
    if (rest.length === 0) return `needs segments after "${group}"`;
    if (rest.length > n) return `has more than ${n + 1} segments`;
    for (let i = 0; i < rest.length; i++) {
      const s = rest[i]!;
      const last = i === rest.length - 1;
      if (last && rest.length < n && s !== '*') return `is incomplete (end it with "*" to cover the rest)`;
      if (!check(i, s)) return `has an unknown segment "${s}"`;
    }
    return null;
  };
  switch (group) {
    case 'configuration':
      return tail(2, (i, s) => ok(s, i === 0 ? CONFIGURATION_SECTIONS : ['read', 'write']));
    case 'lifecycle':
      return tail(4, (i, s) => ok(s, i === 2 ? LIFECYCLE_WORKFLOWS : i === 3 ? LIFECYCLE_RIGHTS : undefined));
    case 'search':
      return tail(1, (_i, s) => ok(s, SEARCH_SCOPES));
    case 'discovery':
      if (rest[0] !== 'feed' && rest[0] !== '*') return 'must be discovery:feed:<campaign>';
      return tail(2, (_i, s) => ok(s));
    default:
      return `has an unknown group "${group ?? ''}" (configuration, lifecycle, search, discovery or *)`;
  }
}

/** Every permission a route or module can require, for the UI and for documentation. */
export function permissionDictionary(): { value: string; description: string }[] {
  const out: { value: string; description: string }[] = [{ value: '*', description: 'Every permission' }];
  for (const s of CONFIGURATION_SECTIONS) {
    out.push({ value: configurationPermission(s, 'read'), description: `Read ${s} configuration` });
    out.push({ value: configurationPermission(s, 'write'), description: `Change ${s} configuration (implies read)` });
  }
  for (const s of SEARCH_SCOPES) out.push({ value: `search:${s}`, description: `Search ${s} (narrowed by the permission's filter)` });
  out.push({ value: 'lifecycle:<module>:<profile>:<workflow>:<direct|request|approve>', description: 'Certificate workflows on a profile' });
  out.push({ value: 'discovery:feed:<campaign>', description: 'Push discovered certificates to a campaign' });
  return out;
}
