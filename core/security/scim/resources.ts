import { isObject, type Json } from './attributes.js';
import { badRequest } from './errors.js';
import type { MappedGroup } from './mapping.js';
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, knownSchema, USER_SCHEMA } from './schemas.js';
import type { ScimUser } from './store.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const segment = (s: string): string => encodeURIComponent(s);

/** A User as answered (RFC 7643 §4.1): its attributes, `active` from the principal, its groups, meta. */
export function userResource(user: ScimUser, groups: MappedGroup[], base: string): Json {
  const { externalId, ...attributes } = user.doc;
  return {
    schemas: isObject(user.doc[ENTERPRISE_SCHEMA]) ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: user.id,
    ...(externalId !== undefined ? { externalId } : {}),
    ...attributes,
    active: user.active,
    ...(groups.length > 0 ? { groups: groups.map((g) => ({ value: g.name, $ref: `${base}/Groups/${segment(g.name)}`, display: g.name, type: 'direct' })) } : {}),
    meta: { resourceType: 'User', created: iso(user.created), lastModified: iso(user.lastModified), location: `${base}/Users/${user.id}` },
  };
}

/** A Group as answered (RFC 7643 §4.2): its name is its id; members are the profile's users only. */
export function groupResource(group: MappedGroup, members: ScimUser[] | undefined, base: string): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: group.name,
    displayName: group.name,
    ...(members !== undefined ? { members: members.map((u) => ({ value: u.id, $ref: `${base}/Users/${u.id}`, display: u.userName, type: 'User' })) } : {}),
    meta: { resourceType: 'Group', location: `${base}/Groups/${segment(group.name)}` },
  };
}

export function listResponse(resources: Json[], total: number, startIndex: number): Json {
  return { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
}

/** Attributes always returned whatever `attributes` / `excludedAttributes` say (RFC 7643 §7 returned: always). */
const ALWAYS = new Set(['schemas', 'id', 'meta']);

/** `attributes=a,b.c,urn:…:User:d` → [top-level name, sub-attribute?] pairs, lower-cased. */
function names(list: string): [string, string | undefined][] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      let path = s;
      if (s.toLowerCase().startsWith('urn:')) {
        const cut = s.lastIndexOf(':');
        const urn = knownSchema(s.slice(0, cut));
        if (urn === ENTERPRISE_SCHEMA) return [ENTERPRISE_SCHEMA.toLowerCase(), s.slice(cut + 1).toLowerCase()] as [string, string];
        if (!urn) throw badRequest('invalidValue', `attributes: unknown schema in "${s}"`);
        path = s.slice(cut + 1);
      }
      const [top, sub] = path.toLowerCase().split('.', 2);
      return [top!, sub];
    });
}

/** RFC 7644 §3.4.2.5: only the attributes asked for, or all but the excluded ones (top level and one sub-level). */
export function project(resource: Json, attributes: string | undefined, excluded: string | undefined): Json {
  if (attributes) {
    const wanted = names(attributes);
    const out: Json = {};
    for (const [key, value] of Object.entries(resource)) {
      const lower = key.toLowerCase();
      if (ALWAYS.has(key)) out[key] = value;
      else if (wanted.some(([t, s]) => t === lower && s === undefined)) out[key] = value;
      else {
        const subs = wanted.filter(([t, s]) => t === lower && s !== undefined).map(([, s]) => s!);
        if (subs.length === 0) continue;
        const pick = (o: unknown) => (isObject(o) ? Object.fromEntries(Object.entries(o).filter(([k]) => subs.includes(k.toLowerCase()))) : o);
        out[key] = Array.isArray(value) ? value.map(pick) : pick(value);
      }
    }
    return out;
  }
  if (excluded) {
    const gone = names(excluded);
    const out: Json = {};
    for (const [key, value] of Object.entries(resource)) {
      const lower = key.toLowerCase();
      if (!ALWAYS.has(key) && gone.some(([t, s]) => t === lower && s === undefined)) continue;
      const subs = gone.filter(([t, s]) => t === lower && s !== undefined).map(([, s]) => s!);
      const drop = (o: unknown) => (isObject(o) ? Object.fromEntries(Object.entries(o).filter(([k]) => !subs.includes(k.toLowerCase()))) : o);
      out[key] = subs.length === 0 ? value : Array.isArray(value) ? value.map(drop) : drop(value);
    }
    return out;
  }
  return resource;
}
