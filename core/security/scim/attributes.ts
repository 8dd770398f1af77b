import { badRequest } from './errors.js';
import { COMMON_ATTRIBUTES, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, findAttribute, knownSchema, USER_ATTRIBUTES, USER_SCHEMA, type Attribute } from './schemas.js';

/** A SCIM resource as JSON. */
export type Json = Record<string, unknown>;

/** Longest string attribute value kept. */
const MAX_STRING = 4096;
/** Names that would reach an object's prototype if used as keys: never attribute names. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function assertSafeName(name: string, where: string): void {
  if (FORBIDDEN.has(name)) throw badRequest('invalidPath', `${where}: "${name}" is not an attribute`);
}

/** Attributes of the core User schema that a client writes (readOnly and writeOnly ones are ignored on input). */
const USER_WITH_COMMON: Attribute[] = [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES];

/**
 * One attribute value as sent → as kept: `null` is unassigned (undefined), a multi-valued attribute sent as a
 * single value becomes a list of one, boolean strings (`"True"`, `"false"`: Entra ID) become booleans, numbers
 * sent for strings become strings. A value of the wrong kind is 400 invalidValue naming the attribute.
 */
export function coerce(attribute: Attribute, value: unknown, path: string): unknown {
  if (value === null || value === undefined) return undefined;
  if (attribute.multiValued) {
    const list = (Array.isArray(value) ? value : [value]).map((v) => coerceOne(attribute, v, path)).filter((v) => v !== undefined);
    return list.length > 0 ? list : undefined;
  }
  return coerceOne(attribute, value, path);
}

function coerceOne(attribute: Attribute, value: unknown, path: string): unknown {
  if (value === null || value === undefined) return undefined;
  switch (attribute.type) {
    case 'complex': {
      if (!isObject(value)) throw badRequest('invalidValue', `${path}: must be an object`);
      const out: Json = {};
      for (const [key, v] of Object.entries(value)) {
        assertSafeName(key, path);
        const sub = findAttribute(attribute.subAttributes, key);
        // Unknown and read-only sub-attributes are ignored (RFC 7643 §2.2: read-only values sent are ignored).
        if (!sub || sub.mutability === 'readOnly') continue;
        const kept = coerce(sub, v, `${path}.${sub.name}`);
        if (kept !== undefined) out[sub.name] = kept;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      throw badRequest('invalidValue', `${path}: must be a boolean`);
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return Number(value);
      throw badRequest('invalidValue', `${path}: must be an integer`);
    case 'decimal':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw badRequest('invalidValue', `${path}: must be a number`);
    default: {
      const text = typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
      if (typeof text !== 'string') throw badRequest('invalidValue', `${path}: must be a string`);
      if (text.length > MAX_STRING) throw badRequest('invalidValue', `${path}: is longer than ${MAX_STRING} characters`);
      if (attribute.type === 'dateTime' && Number.isNaN(Date.parse(text))) throw badRequest('invalidValue', `${path}: must be a date and time (xsd:dateTime)`);
      return text;
    }
  }
}

/**
 * `schemas` of a User body: the core User schema, optionally the enterprise extension; an unknown schema is
 * 400 invalidValue (it would carry attributes this service provider cannot keep).
 */
export function checkUserSchemas(body: Json): void {
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || schemas.some((s) => typeof s !== 'string')) throw badRequest('invalidSyntax', `schemas: must list ${USER_SCHEMA}`);
  const known = (schemas as string[]).map((s) => [s, knownSchema(s)] as const);
  const unknown = known.filter(([, k]) => k !== USER_SCHEMA && k !== ENTERPRISE_SCHEMA).map(([s]) => s);
  if (unknown.length > 0) throw badRequest('invalidValue', `schemas: unknown or not a User schema: ${unknown.join(', ')}`);
  if (!known.some(([, k]) => k === USER_SCHEMA)) throw badRequest('invalidValue', `schemas: must list ${USER_SCHEMA}`);
}

/**
 * A User document (a POST or PUT body, or a document after PATCH operations) → the attributes kept, with their
 * canonical names: core attributes at the top level, the enterprise extension's under its URN. id, meta,
 * schemas, groups (read-only) and password (never kept: provisioned users authenticate through an identity
 * provider) are left out, as are attributes no schema defines (a tolerant reader). `active` is kept here; the
 * store moves it to the principal's `enabled`.
 */
export function normaliseUser(body: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(body)) {
    assertSafeName(key, 'body');
    const schema = key.toLowerCase().startsWith('urn:') ? knownSchema(key) : undefined;
    if (schema === ENTERPRISE_SCHEMA) {
      if (value === null) continue;
      if (!isObject(value)) throw badRequest('invalidValue', `${ENTERPRISE_SCHEMA}: must be an object`);
      const ext: Json = {};
      for (const [k, v] of Object.entries(value)) {
        assertSafeName(k, ENTERPRISE_SCHEMA);
        const a = findAttribute(ENTERPRISE_ATTRIBUTES, k);
        if (!a) continue;
        const kept = coerce(a, v, `${ENTERPRISE_SCHEMA}:${a.name}`);
        if (kept !== undefined) ext[a.name] = kept;
      }
      if (Object.keys(ext).length > 0) out[ENTERPRISE_SCHEMA] = ext;
      continue;
    }
    const a = findAttribute(USER_WITH_COMMON, key);
    if (!a || a.mutability === 'readOnly' || a.mutability === 'writeOnly') continue;
    const kept = coerce(a, value, a.name);
    if (kept !== undefined) out[a.name] = kept;
  }
  const userName = out.userName;
  if (typeof userName !== 'string' || userName.trim().length === 0) throw badRequest('invalidValue', 'userName: is required');
  if (userName.length > 191 || /[\u0000-\u001f]/.test(userName)) throw badRequest('invalidValue', 'userName: must be 1 to 191 characters, without control characters');
  if (out.externalId !== undefined && (out.externalId as string).length > 255) throw badRequest('invalidValue', 'externalId: is longer than 255 characters');
  return out;
}
