import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { ProblemError } from '../../errors/index.js';
import { PermissionSet, type Permission } from '../permissions/permission-set.js';

export type { LocalizedText } from '../../http/localized-text.js';
import type { LocalizedText } from '../../http/localized-text.js';

/** A team as a principal sees it (client-compat §7: teams as objects). */
export interface PrincipalTeam {
  name: string;
  displayName: LocalizedText[];
  description: LocalizedText[];
  /** Whether this principal manages the team (RA team membership). */
  manager: boolean;
  externallyManaged: boolean;
}

/** Who the request runs as, with everything authorization needs, resolved once per cache period. */
export interface ResolvedPrincipal {
  identifier: string;
  name: string | null;
  email: string | null;
  tenant: string;
  identityProviderName: string;
  identityProviderType: string;
  /** Own permissions plus those of every role. */
  permissions: PermissionSet;
  /** The principal's own permissions (principal information), without its roles'. */
  ownPermissions: Permission[];
  roles: string[];
  teams: PrincipalTeam[];
  preferences: Record<string, unknown>;
}

export interface PrincipalIdentity {
  identifier: string;
  name?: string | null;
  email?: string | null;
  tenant: string;
  identityProviderName: string;
  identityProviderType: string;
}

/** At most this much dashboard JSON is kept in memory per node (a dashboard may be 256 KiB). */
const DASHBOARD_CACHE_BYTES = 32 * 1024 * 1024;

const parse = <T>(text: string | null | undefined, fallback: T): T => {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

/**
 * Builds a principal from its principal information, its memberships, and its roles' and teams'
 * definitions (four indexed reads), and keeps the result for `ttlMs`; a disabled principal information
 * makes it throw SEC-AUTH-005 (never cached). Any write to the security
 * configuration on this node calls `invalidate()`; other nodes see it within the TTL.
 */
export class PrincipalResolver {
  private readonly cache: LRUCache<string, ResolvedPrincipal> | null;
  /** The self view's customDashboards, bounded by their total size rather than by count. */
  private readonly dashboardCache: LRUCache<string, Record<string, unknown>[]> | null;

  constructor(
    private readonly knex: Knex,
    options: { ttlMs: number; maxEntries: number },
  ) {
    this.cache = options.ttlMs > 0 ? new LRUCache({ max: options.maxEntries, ttl: options.ttlMs, ttlAutopurge: false }) : null;
    this.dashboardCache =
      options.ttlMs > 0
        ? new LRUCache({ max: options.maxEntries, ttl: options.ttlMs, maxSize: DASHBOARD_CACHE_BYTES, sizeCalculation: (v, k) => k.length + 2 + JSON.stringify(v).length })
        : null;
  }

  invalidate(): void {
    this.cache?.clear();
    this.dashboardCache?.clear();
  }

  /** A principal's dashboards as the self view lists them ({...body, name}), cached like the principal. */
  async dashboards(tenant: string, identifier: string): Promise<Record<string, unknown>[]> {
    const key = `${tenant}\u0000${identifier}`;
    const cached = this.dashboardCache?.get(key);
    if (cached) return cached;
    const rows = (await this.knex('security_dashboards').where({ tenant, principal: identifier }).select('name', 'body').orderBy('name')) as { name: string; body: string }[];
    const dashboards = rows.map((r) => ({ ...parse<Record<string, unknown>>(r.body, {}), name: r.name }));
    this.dashboardCache?.set(key, dashboards);
    return dashboards;
  }

  /** Drops one principal, whatever provider it logged in through. */
  forget(tenant: string, identifier: string): void {
    this.dashboardCache?.delete(`${tenant}\u0000${identifier}`);
    if (!this.cache) return;
    for (const key of [...this.cache.keys()]) {
      const [t, , id] = key.split('\u0000');
      if (t === tenant && id === identifier) this.cache.delete(key);
    }
  }

  async resolve(who: PrincipalIdentity): Promise<ResolvedPrincipal> {
    const key = `${who.tenant}\u0000${who.identityProviderName}\u0000${who.identifier}`;
    const cached = this.cache?.get(key);
    if (cached) return cached;
    const principal = await this.load(who);
    this.cache?.set(key, principal);
    return principal;
  }

  /**
   * A principal whose grants come with its identity rather than from principal information and memberships (a
   * service account: its own permissions and roles). Not cached here: its caller keeps the result.
   */
  async compose(who: PrincipalIdentity, own: Permission[], roleNames: string[]): Promise<ResolvedPrincipal> {
    const roles =
      roleNames.length === 0
        ? []
        : ((await this.knex('security_roles').where({ tenant: who.tenant }).whereIn('name', roleNames).select('name', 'permissions')) as { name: string; permissions: string }[]);
    const all = [...own];
    for (const role of roles) all.push(...parse<Permission[]>(role.permissions, []));
    return {
      identifier: who.identifier,
      name: who.name ?? null,
      email: who.email ?? null,
      tenant: who.tenant,
      identityProviderName: who.identityProviderName,
      identityProviderType: who.identityProviderType,
      permissions: new PermissionSet(all),
      ownPermissions: own,
      roles: roles.map((r) => r.name).sort(),
      teams: [],
      preferences: {},
    };
  }

  private async load(who: PrincipalIdentity): Promise<ResolvedPrincipal> {
    const { tenant, identifier } = who;
    const [info, memberships] = await Promise.all([
      this.knex('security_principal_infos').where({ tenant, identifier }).first() as Promise<
        { name: string | null; email: string | null; permissions: string; preferences: string; enabled: number | boolean } | undefined
      >,
      this.knex('security_memberships').where({ tenant, identifier }).select('kind', 'group_name', 'manager') as Promise<
        { kind: string; group_name: string; manager: number | boolean }[]
      >,
    ]);
    // Principal information `enabled: false` (horizon-go v2 PrincipalInfo: "if the principal is allowed to
    // login"): refused whatever provider vouched for it, on every request (keys and sessions included).
    if (info && !info.enabled) throw new ProblemError('SEC-AUTH-005');
    const roleNames = memberships.filter((m) => m.kind === 'role').map((m) => m.group_name).sort();
    const teamMembership = new Map(memberships.filter((m) => m.kind === 'team').map((m) => [m.group_name, Boolean(m.manager)]));
    const [roles, teams] = await Promise.all([
      roleNames.length === 0
        ? []
        : (this.knex('security_roles').where({ tenant }).whereIn('name', roleNames).select('name', 'permissions') as Promise<{ name: string; permissions: string }[]>),
      teamMembership.size === 0
        ? []
        : (this.knex('security_teams')
            .where({ tenant })
            .whereIn('name', [...teamMembership.keys()])
            .select('name', 'display_name', 'description', 'externally_managed')
            .orderBy('name') as Promise<{ name: string; display_name: string; description: string; externally_managed: number | boolean }[]>),
    ]);
    const own = parse<Permission[]>(info?.permissions, []);
    const all = [...own];
    for (const role of roles) all.push(...parse<Permission[]>(role.permissions, []));
    return {
      identifier,
      name: who.name ?? info?.name ?? null,
      email: who.email ?? info?.email ?? null,
      tenant,
      identityProviderName: who.identityProviderName,
      identityProviderType: who.identityProviderType,
      permissions: new PermissionSet(all),
      ownPermissions: own,
      // Only roles that exist: a membership left behind by a deleted role grants nothing.
      roles: roles.map((r) => r.name).sort(),
      teams: teams.map((t) => ({
        name: t.name,
        displayName: parse<LocalizedText[]>(t.display_name, []),
        description: parse<LocalizedText[]>(t.description, []),
        manager: teamMembership.get(t.name) ?? false,
        externallyManaged: Boolean(t.externally_managed),
      })),
      preferences: parse<Record<string, unknown>>(info?.preferences, {}),
    };
  }
}
