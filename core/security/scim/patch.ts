import type { Filter } from 'scim2-parse-filter';
import { assertSafeName, isObject, type Json } from './attributes.js';
import { badRequest } from './errors.js';
import { matches, parseFilter } from './filter.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, findAttribute, PATCH_SCHEMA, USER_ATTRIBUTES, USER_SCHEMA, type Attribute } from './schemas.js';

/** One PATCH operation with its op lower-cased (Entra ID sends `Add`, `Replace`, `Remove`). */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path?: string;
  value?: unknown;
}

/** Most operations one PATCH may carry. */
const MAX_OPERATIONS = 1000;

/** A PatchOp body (RFC 7644 §3.5.2) → its operations; any other shape is 400 invalidSyntax. */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw badRequest('invalidSyntax', 'The body must be a PatchOp message (a JSON object)');
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === PATCH_SCHEMA.toLowerCase())) {
    throw badRequest('invalidSyntax', `schemas: must be ["${PATCH_SCHEMA}"]`);
  }
  const list = body.Operations ?? body.operations;
  if (!Array.isArray(list) || list.length === 0) throw badRequest('invalidSyntax', 'Operations: must be a list of at least one operation');
  if (list.length > MAX_OPERATIONS) throw badRequest('invalidSyntax', `Operations: at most ${MAX_OPERATIONS}`);
  return list.map((o, i) => {
    if (!isObject(o) || typeof o.op !== 'string') throw badRequest('invalidSyntax', `Operations[${i}]: must be an object with op`);
    const op = o.op.toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw badRequest('invalidSyntax', `Operations[${i}].op: must be add, replace or remove, not "${o.op}"`);
    if (o.path !== undefined && o.path !== null && (typeof o.path !== 'string' || o.path.trim() === '')) throw badRequest('invalidPath', `Operations[${i}].path: must be a non-empty string`);
    if (op !== 'remove' && o.value === undefined) throw badRequest('invalidSyntax', `Operations[${i}]: ${op} needs a value`);
    const path = typeof o.path === 'string' ? o.path.trim() : undefined;
    return { op, ...(path !== undefined ? { path } : {}), ...(o.value !== undefined ? { value: o.value } : {}) } as PatchOperation;
  });
}

/** Where a PATCH path leads in a User: the attribute, optionally a value filter and a sub-attribute. */
interface Target {
  /** undefined: the core schema (top level); else the extension URN the attribute lives under. */
  extension: string | undefined;
  /** undefined: the path is the extension itself. */
  attribute: Attribute | undefined;
  filter?: Filter;
  sub?: Attribute;
}

const USER_TOP: Attribute[] = [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES];
const PATH = /^([A-Za-z$][\w$-]*)(?:\[(.*)\])?(?:\.([A-Za-z$][\w$-]*))?$/s;

/** A User PATCH path (RFC 7644 §3.5.2: attrPath, valuePath [subAttr], optionally behind a schema URN). */
export function parseUserPath(path: string): Target {
  let rest = path;
  let extension: string | undefined;
  const lower = path.toLowerCase();
  if (lower.startsWith('urn:')) {
    if (lower === ENTERPRISE_SCHEMA.toLowerCase()) return { extension: ENTERPRISE_SCHEMA, attribute: undefined };
    if (lower.startsWith(`${ENTERPRISE_SCHEMA.toLowerCase()}:`)) {
      extension = ENTERPRISE_SCHEMA;
      rest = path.slice(ENTERPRISE_SCHEMA.length + 1);
    } else if (lower.startsWith(`${USER_SCHEMA.toLowerCase()}:`)) {
      rest = path.slice(USER_SCHEMA.length + 1);
    } else {
      throw badRequest('invalidPath', `${path}: no such schema`);
    }
  }
  const m = PATH.exec(rest);
  if (!m) throw badRequest('invalidPath', `${path}: is not an attribute path`);
  const [, name, filterText, subName] = m;
  assertSafeName(name!, path);
  const attribute = findAttribute(extension ? ENTERPRISE_ATTRIBUTES : USER_TOP, name!);
  if (!attribute) throw badRequest('invalidPath', `${path}: no attribute "${name}"`);
  const target: Target = { extension, attribute };
  if (filterText !== undefined) {
    if (!attribute.multiValued || attribute.type !== 'complex') throw badRequest('invalidPath', `${path}: a value filter applies to multi-valued complex attributes only`);
    try {
      target.filter = parseFilter(filterText);
    } catch (err) {
      throw badRequest('invalidPath', `${path}: the value filter cannot be parsed (${(err as Error).message})`);
    }
  }
  if (subName !== undefined) {
    assertSafeName(subName, path);
    const sub = findAttribute(attribute.subAttributes, subName);
    if (!sub) throw badRequest('invalidPath', `${path}: "${attribute.name}" has no sub-attribute "${subName}"`);
    target.sub = sub;
  }
  if (attribute.mutability === 'readOnly' || target.sub?.mutability === 'readOnly') throw badRequest('mutability', `${path}: is read-only`);
  return target;
}

/**
 * The attributes an `eq` value filter pins (`type eq "work"`, or several joined by `and`): the element a
 * replace or add through a filter that matches nothing creates (Entra ID sends
 * `emails[type eq "work"].value` for a user that has no work email yet). undefined for any other filter.
 */
function pinned(filter: Filter, attribute: Attribute): Json | undefined {
  if (filter.op === 'eq') {
    const f = filter as { attrPath: string; compValue: unknown };
    const sub = findAttribute(attribute.subAttributes, f.attrPath);
    return sub && f.compValue !== null ? { [sub.name]: f.compValue } : undefined;
  }
  if (filter.op === 'and') {
    const parts = (filter as { filters: Filter[] }).filters.map((f) => pinned(f, attribute));
    return parts.every((p) => p !== undefined) ? Object.assign({}, ...parts) : undefined;
  }
  return undefined;
}

const sameValue = (a: unknown, b: unknown): boolean => {
  if (isObject(a) && isObject(b) && a.value !== undefined && b.value !== undefined) return a.value === b.value;
  return JSON.stringify(a) === JSON.stringify(b);
};

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

function apply(doc: Json, op: PatchOperation['op'], target: Target, value: unknown, path: string): void {
  let holder: Json = doc;
  if (target.extension) {
    if (!isObject(doc[target.extension])) doc[target.extension] = {};
    holder = doc[target.extension] as Json;
  }
  const attribute = target.attribute;
  if (!attribute) {
    // The extension itself: its attributes one by one.
    if (op === 'remove') {
      delete doc[target.extension!];
      return;
    }
    if (!isObject(value)) throw badRequest('invalidValue', `${path}: the value must be an object of its attributes`);
    for (const [k, v] of Object.entries(value)) apply(doc, op, parseUserPath(`${target.extension}:${k}`), v, `${path}:${k}`);
    return;
  }
  // Never kept (provisioned users authenticate through an identity provider): accepted and ignored.
  if (attribute.mutability === 'writeOnly') return;
  const name = attribute.name;
  const sub = target.sub;
  if (op !== 'remove' && value === null) return apply(doc, 'remove', target, undefined, path);

  if (target.filter) {
    const list = Array.isArray(holder[name]) ? (holder[name] as unknown[]) : [];
    const scope = { attributes: attribute.subAttributes ?? [], extensions: new Map() };
    const hit = (el: unknown) => isObject(el) && matches(target.filter!, el, scope);
    if (op === 'remove') {
      holder[name] = sub ? list.map((el) => (hit(el) ? omit(el as Json, sub.name) : el)) : list.filter((el) => !hit(el));
      return;
    }
    if (!list.some(hit)) {
      const template = pinned(target.filter, attribute);
      if (!template) throw badRequest('noTarget', `${path}: no value matches the filter`);
      const created = sub ? { ...template, [sub.name]: value } : { ...template, ...(isObject(value) ? value : { value }) };
      holder[name] = [...list, created];
      return;
    }
    holder[name] = list.map((el) => {
      if (!hit(el)) return el;
      if (sub) return { ...(el as Json), [sub.name]: value };
      if (!isObject(value)) throw badRequest('invalidValue', `${path}: the value must be an object`);
      return op === 'add' ? { ...(el as Json), ...value } : { ...value };
    });
    return;
  }

  if (sub) {
    if (attribute.multiValued) {
      const list = Array.isArray(holder[name]) ? (holder[name] as unknown[]) : [];
      if (op !== 'remove' && list.length === 0) throw badRequest('noTarget', `${path}: "${name}" has no value`);
      holder[name] = list.map((el) => (isObject(el) ? (op === 'remove' ? omit(el, sub.name) : { ...el, [sub.name]: value }) : el));
    } else if (op === 'remove') {
      if (isObject(holder[name])) holder[name] = omit(holder[name] as Json, sub.name);
    } else {
      holder[name] = { ...(isObject(holder[name]) ? (holder[name] as Json) : {}), [sub.name]: value };
    }
    return;
  }

  if (op === 'remove') {
    if (attribute.required) throw badRequest('mutability', `${path}: is required and cannot be removed`);
    // A multi-valued attribute with the values to remove (Entra ID removes group members this way).
    if (attribute.multiValued && value !== undefined && value !== null) {
      const gone = asList(value);
      holder[name] = (Array.isArray(holder[name]) ? (holder[name] as unknown[]) : []).filter((el) => !gone.some((g) => sameValue(el, g)));
    } else {
      delete holder[name];
    }
    return;
  }
  if (attribute.multiValued) {
    const incoming = asList(value);
    if (op === 'replace') {
      holder[name] = incoming;
    } else {
      const list = Array.isArray(holder[name]) ? [...(holder[name] as unknown[])] : [];
      for (const v of incoming) if (!list.some((el) => sameValue(el, v))) list.push(v);
      holder[name] = list;
    }
    // One primary value at most: a value added or replaced as primary takes the flag from the others.
    if (incoming.some((v) => isObject(v) && (v.primary === true || String(v.primary).toLowerCase() === 'true'))) {
      holder[name] = (holder[name] as unknown[]).map((el) => (isObject(el) && !incoming.includes(el) && el.primary !== undefined ? omit(el, 'primary') : el));
    }
    return;
  }
  if (attribute.type === 'complex') {
    if (!isObject(value)) throw badRequest('invalidValue', `${path}: the value must be an object`);
    // RFC 7644 §3.5.2.3: sub-attributes not given are left unchanged (by add and replace alike).
    holder[name] = { ...(isObject(holder[name]) ? (holder[name] as Json) : {}), ...value };
    return;
  }
  holder[name] = value;
}

function omit(object: Json, key: string): Json {
  const out = { ...object };
  delete out[key];
  return out;
}

/**
 * The operations applied in order to a User document (canonical attributes, `active` included). An operation
 * without `path` takes an object whose members are attribute paths and their values (RFC 7644's
 * `{"emails": [...], "nickName": "Babs"}` and Entra ID's `{"name.givenName": "Barbara", "active": "False"}`
 * alike). The result still needs normaliseUser (types, boolean strings, required attributes).
 */
export function applyUserPatch(document: Json, operations: PatchOperation[]): Json {
  const doc = structuredClone(document);
  for (const [i, o] of operations.entries()) {
    if (o.path !== undefined) {
      apply(doc, o.op, parseUserPath(o.path), o.value, o.path);
      continue;
    }
    if (o.op === 'remove') throw badRequest('noTarget', `Operations[${i}]: remove needs a path`);
    if (!isObject(o.value)) throw badRequest('invalidSyntax', `Operations[${i}]: without a path, the value must be an object of attributes`);
    for (const [key, v] of Object.entries(o.value)) {
      if (key.toLowerCase() === 'schemas') continue;
      if (key.toLowerCase() === USER_SCHEMA.toLowerCase() && isObject(v)) {
        for (const [k, w] of Object.entries(v)) apply(doc, o.op, parseUserPath(k), w, k);
      } else {
        apply(doc, o.op, parseUserPath(key), v, key);
      }
    }
  }
  return doc;
}

/** What a Group PATCH does to the members (SCIM user ids) of the group, in order. */
export type MemberStep = { kind: 'add' | 'remove' | 'set'; ids: string[] } | { kind: 'removeWhere'; filter: Filter } | { kind: 'clear' };

const memberIds = (value: unknown, where: string): string[] =>
  asList(value).map((m) => {
    const id = isObject(m) ? m.value : m;
    if (typeof id !== 'string' || id.length === 0) throw badRequest('invalidValue', `${where}: each member must be {"value": "<user id>"}`);
    return id;
  });

/**
 * Group PATCH operations (RFC 7644 §3.5.2 and Figures 2–4 of its examples; Entra ID's `Add`/`Remove` of
 * `members` with values; Okta's `members[value eq "…"]` removal and full `replace`) → steps on the members.
 * `displayName` may be sent unchanged (`same`); renaming a group is a 400 mutability (a team is renamed on the
 * platform); `externalId` is accepted and not kept.
 */
export function groupMemberSteps(operations: PatchOperation[], same: (displayName: unknown) => boolean): MemberStep[] {
  const steps: MemberStep[] = [];
  const one = (op: PatchOperation['op'], path: string, value: unknown, i: number): void => {
    const where = `Operations[${i}]`;
    const lower = path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/, '');
    if (lower === 'displayname') {
      if (op === 'remove' || !same(value)) throw badRequest('mutability', `${where}: displayName is the name of the team or role; rename it on the platform`);
      return;
    }
    if (lower === 'externalid') return;
    if (lower === 'members') {
      if (op === 'remove') steps.push(value === undefined || value === null ? { kind: 'clear' } : { kind: 'remove', ids: memberIds(value, where) });
      else steps.push({ kind: op === 'add' ? 'add' : 'set', ids: value === null ? [] : memberIds(value, where) });
      return;
    }
    const m = /^members\[(.*)\](\.value)?$/is.exec(path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/i, ''));
    if (m && op === 'remove') {
      try {
        steps.push({ kind: 'removeWhere', filter: parseFilter(m[1]!) });
      } catch (err) {
        throw badRequest('invalidPath', `${where}: the value filter cannot be parsed (${(err as Error).message})`);
      }
      return;
    }
    throw badRequest('invalidPath', `${where}: ${path} is not a path this service provider changes on a group (members, members[value eq "…"])`);
  };
  for (const [i, o] of operations.entries()) {
    if (o.path !== undefined) {
      one(o.op, o.path, o.value, i);
      continue;
    }
    if (o.op === 'remove') throw badRequest('noTarget', `Operations[${i}]: remove needs a path`);
    if (!isObject(o.value)) throw badRequest('invalidSyntax', `Operations[${i}]: without a path, the value must be an object of attributes`);
    for (const [key, v] of Object.entries(o.value)) if (key.toLowerCase() !== 'schemas' && key.toLowerCase() !== 'id') one(o.op, key, v, i);
  }
  return steps;
}
