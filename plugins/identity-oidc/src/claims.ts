/** From the provider's claims to the platform's principal fields. */

export interface ClaimMapping {
  identifier: string;
  name: string;
  email: string;
  roles?: string;
  teams?: string;
}

/** A claim by its name, else by a dotted path into nested objects (Keycloak's `realm_access.roles`). */
export function claimValue(claims: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes('.')) return undefined;
  let at: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** A claim as one string: strings as they are, numbers written out; anything else is absent. */
export function stringClaim(claims: Record<string, unknown>, name: string): string | undefined {
  const v = claimValue(claims, name);
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * The group names a claim holds (an array of strings, or one string), through `map` when there is one: then only
 * the values it lists count. An absent claim is an empty list (the provider vouches for no group).
 */
export function groupClaim(claims: Record<string, unknown>, name: string, map?: Record<string, string>): string[] {
  const v = claimValue(claims, name);
  const values = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
  const out = new Set<string>();
  for (const value of values) {
    if (map === undefined) out.add(value);
    else if (Object.hasOwn(map, value)) out.add(map[value]!);
  }
  return [...out].filter((n) => n.length > 0).sort();
}
