import { parse, type Filter } from 'scim2-parse-filter';
import { isObject, type Json } from './attributes.js';
import { badRequest } from './errors.js';
import { findAttribute, knownSchema, MAX_RESULTS, type Attribute } from './schemas.js';

/** Longest filter accepted (the query schema refuses longer ones first). */
export const MAX_FILTER_LENGTH = 4096;

/**
 * A `filter` (RFC 7644 §3.4.2.2) → its tree, parsed by scim2-parse-filter: eq ne co sw ew gt ge lt le pr,
 * and / or / not, grouping and value paths (`emails[type eq "work"]`). Bad syntax is 400 invalidFilter.
 */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) throw badRequest('invalidFilter', `The filter is longer than ${MAX_FILTER_LENGTH} characters`);
  try {
    return parse(text);
  } catch (err) {
    // The parser's own messages name the token it stopped at; a nesting too deep to parse is a RangeError.
    const reason = err instanceof RangeError ? 'it nests too deeply' : (err as Error).message;
    throw badRequest('invalidFilter', `The filter cannot be parsed: ${reason}`);
  }
}

/** Where an attribute path leads in a resource: the names to walk and the attribute definitions beside them. */
interface Scope {
  attributes: readonly Attribute[];
  /** URN → the attributes of a schema extension (top level only). */
  extensions: ReadonlyMap<string, readonly Attribute[]>;
}

interface Found {
  values: unknown[];
  attribute: Attribute | undefined;
}

const keyOf = (object: Json, name: string): string | undefined => {
  const lower = name.toLowerCase();
  return Object.keys(object).find((k) => k.toLowerCase() === lower);
};

/**
 * The values at `path` in `resource` (a dotted path, optionally prefixed by a schema URN), flattened over
 * multi-valued attributes, with the definition of the attribute it names.
 */
function walk(resource: Json, path: string, scope: Scope, ownUrn: string | undefined): Found {
  let names: string[];
  let current: unknown[] = [resource];
  let attributes: readonly Attribute[] | undefined = scope.attributes;
  if (path.toLowerCase().startsWith('urn:')) {
    const cut = path.lastIndexOf(':');
    const urn = knownSchema(path.slice(0, cut));
    if (!urn) return { values: [], attribute: undefined };
    names = path.slice(cut + 1).split('.');
    const ext = scope.extensions.get(urn);
    if (ext) {
      current = isObject(resource[urn]) ? [resource[urn]] : [];
      attributes = ext;
    } else if (urn !== ownUrn) {
      return { values: [], attribute: undefined };
    }
  } else {
    names = path.split('.');
  }
  let attribute: Attribute | undefined;
  for (const name of names) {
    attribute = findAttribute(attributes, name);
    attributes = attribute?.subAttributes;
    const next: unknown[] = [];
    for (const c of current) {
      for (const item of Array.isArray(c) ? c : [c]) {
        if (!isObject(item)) continue;
        const key = keyOf(item, name);
        if (key !== undefined && item[key] !== undefined && item[key] !== null) next.push(item[key]);
      }
    }
    current = next;
  }
  return { values: current.flatMap((v) => (Array.isArray(v) ? v : [v])), attribute };
}

/** walk, where a multi-valued complex attribute compared as a whole (`emails co "@x"`) means its `value`s (RFC 7644 §3.4.2.2). */
function lookup(resource: Json, path: string, scope: Scope, ownUrn: string | undefined): Found {
  const found = walk(resource, path, scope, ownUrn);
  if (found.attribute?.type === 'complex' && found.attribute.multiValued) {
    return {
      values: found.values.flatMap((v) => (isObject(v) && v.value !== undefined ? [v.value] : [])),
      attribute: findAttribute(found.attribute.subAttributes, 'value'),
    };
  }
  return found;
}

type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'lt' | 'ge' | 'le';

function compare(op: CompareOp, found: Found, operand: string | number | boolean | null, path: string): boolean {
  const { attribute } = found;
  if (attribute?.type === 'complex') throw badRequest('invalidFilter', `${path}: a complex attribute cannot be compared; name one of its sub-attributes`);
  if (attribute?.type === 'boolean' && !['eq', 'ne'].includes(op)) throw badRequest('invalidFilter', `${path}: a boolean attribute is compared with eq or ne only`);
  const dates = attribute?.type === 'dateTime';
  const folded = attribute ? !attribute.caseExact : true;
  const norm = (v: unknown): unknown => {
    if (dates && typeof v === 'string') return Date.parse(v);
    if (typeof v === 'string' && folded) return v.toLowerCase();
    return v;
  };
  const b = norm(operand);
  const test = (raw: unknown): boolean => {
    const a = norm(raw);
    switch (op) {
      case 'eq':
      case 'ne':
        return a === b;
      case 'co':
        return b !== null && String(a).includes(String(b));
      case 'sw':
        return b !== null && String(a).startsWith(String(b));
      case 'ew':
        return b !== null && String(a).endsWith(String(b));
      default: {
        if (b === null || typeof a !== typeof b || typeof a === 'boolean') return false;
        const [x, y] = [a as string | number, b as string | number];
        return op === 'gt' ? x > y : op === 'ge' ? x >= y : op === 'lt' ? x < y : x <= y;
      }
    }
  };
  // `ne`: no value is equal (an attribute without a value is not equal to anything).
  if (op === 'ne') return !found.values.some(test);
  return found.values.some(test);
}

/**
 * Whether `resource` matches `filter`. Attribute names compare case-insensitively; string values too unless
 * the attribute is caseExact (id, externalId…); dateTime values as instants (RFC 7644 §3.4.2.2).
 */
export function matches(filter: Filter, resource: Json, scope: Scope, ownUrn?: string): boolean {
  switch (filter.op) {
    case 'and':
      return (filter as { filters: Filter[] }).filters.every((f) => matches(f, resource, scope, ownUrn));
    case 'or':
      return (filter as { filters: Filter[] }).filters.some((f) => matches(f, resource, scope, ownUrn));
    case 'not':
      return !matches((filter as { filter: Filter }).filter, resource, scope, ownUrn);
    case '[]': {
      const f = filter as { attrPath: string; valFilter: Filter };
      const { values, attribute } = walk(resource, f.attrPath, scope, ownUrn);
      const inner: Scope = { attributes: attribute?.subAttributes ?? [], extensions: new Map() };
      return values.some((v) => isObject(v) && matches(f.valFilter, v, inner));
    }
    case 'pr': {
      const found = lookup(resource, (filter as { attrPath: string }).attrPath, scope, ownUrn);
      return found.values.some((v) => v !== '' && !(Array.isArray(v) && v.length === 0));
    }
    default: {
      const f = filter as { op: CompareOp; attrPath: string; compValue: string | number | boolean | null };
      return compare(f.op, lookup(resource, f.attrPath, scope, ownUrn), f.compValue, f.attrPath);
    }
  }
}

export type { Scope as FilterScope };

/** The value a resource sorts by: the first value at `sortBy` (a multi-valued attribute's primary one first). */
function sortValue(resource: Json, sortBy: string, scope: Scope, ownUrn: string | undefined): string | number | boolean | undefined {
  const found = lookup(resource, sortBy, scope, ownUrn);
  const v = found.values[0];
  if (v === undefined || isObject(v)) return undefined;
  if (typeof v === 'string') return found.attribute?.type === 'dateTime' ? Date.parse(v) : found.attribute?.caseExact ? v : v.toLowerCase();
  return v as number | boolean;
}

/** RFC 7644 §3.4.2.3: resources without a value at sortBy come last in ascending order. */
export function sortResources(resources: Json[], sortBy: string, order: 'ascending' | 'descending', scope: Scope, ownUrn?: string): Json[] {
  const keyed = resources.map((r) => ({ r, k: sortValue(r, sortBy, scope, ownUrn) }));
  const sign = order === 'descending' ? -1 : 1;
  keyed.sort((a, b) => {
    if (a.k === undefined && b.k === undefined) return 0;
    if (a.k === undefined) return 1;
    if (b.k === undefined) return -1;
    return a.k < b.k ? -sign : a.k > b.k ? sign : 0;
  });
  return keyed.map((x) => x.r);
}

/** startIndex (1-based; below 1 is 1) and count (capped at MAX_RESULTS; below 0 is 0), RFC 7644 §3.4.2.4. */
export function page(startIndex: number | undefined, count: number | undefined): { start: number; count: number } {
  const start = Math.max(1, Math.trunc(startIndex ?? 1));
  const size = Math.min(MAX_RESULTS, Math.max(0, Math.trunc(count ?? MAX_RESULTS)));
  return { start, count: size };
}
