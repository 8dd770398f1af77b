import { Ajv, type ValidateFunction } from 'ajv';
import { ProblemError } from '../../errors/index.js';
import type { SecretBox } from '../../secrets/index.js';
import type { CoreServices } from '../../services.js';
import { aliasOfHorizon, aliasOfType } from './horizon-types.js';

/** What secret configuration fields read in every answer and event. */
export const SECRET_MASK = '********';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const SEALED = '$sealed';
const isSealed = (v: unknown): v is { $sealed: string } => isObject(v) && typeof v[SEALED] === 'string' && Object.keys(v).length === 1;

// Vendor schemas carry annotations of their own (x-secret, x-*): allowed, not enforced. Defaults fill in.
const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true });
ajv.addKeyword({ keyword: 'x-secret', schemaType: 'boolean' });
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Paths of the fields a configSchema marks `"x-secret": true`, at any depth of nested objects
 * (`properties` inside `properties`): `[['apiKey'], ['eab', 'hmacKey']]`.
 */
export function secretPathsOf(schema: Json | undefined, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  const props = isObject(schema?.properties) ? (schema.properties as Json) : {};
  for (const [name, sub] of Object.entries(props)) {
    if (!isObject(sub)) continue;
    if (sub['x-secret'] === true) out.push([...prefix, name]);
    else out.push(...secretPathsOf(sub, [...prefix, name]));
  }
  return out;
}

const getAt = (obj: Json, path: readonly string[]): unknown => {
  let at: unknown = obj;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return at;
};

function setAt(obj: Json, path: readonly string[], value: unknown): void {
  let at: Json = obj;
  for (const key of path.slice(0, -1)) {
    // Removing a field of an object the client left out changes nothing (no `eab: {}` made up).
    if (!isObject(at[key])) {
      if (value === undefined) return;
      at[key] = {};
    }
    at = at[key] as Json;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
}

const clone = <T>(v: T): T => structuredClone(v);

type TypeServices = Pick<CoreServices, 'provided' | 'plugins'>;

/** PKI-CONN-006 naming the installed types, and the Horizon names accepted for them. */
function unknownType(services: TypeServices, type: string): ProblemError {
  const known = services.provided.pkiConnectors.types();
  const aliases = known.flatMap((k) => {
    const alias = aliasOfType(k);
    return alias ? [`Horizon "${alias.horizon}" = ${k}`] : [];
  });
  return new ProblemError('PKI-CONN-006', { detail: `"${type}" is not a PKI connector type; installed: ${known.join(', ') || 'none'}${aliases.length > 0 ? ` (${aliases.join(', ')})` : ''}` });
}

/** The manifest configSchema of the plugin providing connector type `type`; PKI-CONN-006 when none does. */
export function schemaOfType(services: TypeServices, type: string): Json | undefined {
  const pluginId = services.provided.pkiConnectors.pluginOf(type);
  if (!pluginId) throw unknownType(services, type);
  return services.plugins.manifestOf(pluginId)?.configSchema as Json | undefined;
}

/** A connector type as a client names it: the installed type, and the Horizon name used for it (or null). */
export interface ResolvedType {
  type: string;
  wireType: string | null;
  schema: Json | undefined;
}

/**
 * Resolves a client's `type`: an installed type, else a Horizon name of one (horizon-types.ts, e.g.
 * `integrated` for `local-ca`); PKI-CONN-006 naming both otherwise. An installed type of the same name as a
 * Horizon alias wins over the alias.
 */
export function resolveType(services: TypeServices, name: string): ResolvedType {
  if (services.provided.pkiConnectors.pluginOf(name)) return { type: name, wireType: null, schema: schemaOfType(services, name) };
  const alias = aliasOfHorizon(name);
  if (alias && services.provided.pkiConnectors.pluginOf(alias.type)) return { type: alias.type, wireType: alias.horizon, schema: schemaOfType(services, alias.type) };
  throw unknownType(services, name);
}

/**
 * The complete configuration to validate and store: secret fields the client left out or sent back as
 * ******** keep `current`'s value (same type only); null clears one. Validated against the schema
 * (defaults filled in); PKI-CONN-002 names the first problem.
 */
export function checkConfiguration(schema: Json | undefined, input: Json | undefined, current: Json | null): Json {
  const config = clone(input ?? {});
  for (const path of secretPathsOf(schema)) {
    const sent = getAt(config, path);
    if (sent === null) setAt(config, path, undefined);
    else if (sent === undefined || sent === SECRET_MASK) setAt(config, path, current ? getAt(current, path) : undefined);
  }
  if (!schema) return config;
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      throw new ProblemError('PKI-CONN-002', { detail: `the connector's configSchema does not compile: ${(err as Error).message}` });
    }
    compiled.set(schema, validate);
  }
  if (!validate(config)) {
    const e = validate.errors![0]!;
    const where = e.instancePath ? `configuration${e.instancePath.replace(/\//g, '.')}` : 'configuration';
    const extra = e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : '';
    throw new ProblemError('PKI-CONN-002', { detail: `${where} ${e.message ?? 'is invalid'}${extra}` });
  }
  return config;
}

/** Where a sealed field belongs: a ciphertext copied to another connector or field does not open. */
const aad = (tenant: string, connector: string, path: readonly string[]): string => `pki.connector:${tenant}:${connector}:${path.join('.')}`;

/** The configuration to store: each secret field replaced by `{"$sealed": …}`. */
export function sealConfiguration(secrets: SecretBox, tenant: string, connector: string, schema: Json | undefined, config: Json): Json {
  const out = clone(config);
  for (const path of secretPathsOf(schema)) {
    const value = getAt(out, path);
    if (value !== undefined) setAt(out, path, { [SEALED]: secrets.seal(JSON.stringify(value), aad(tenant, connector, path)) });
  }
  return out;
}

/** Walks a stored configuration, replacing each sealed field by `replace(sealed, path)`. */
function mapSealed(value: unknown, path: string[], replace: (sealed: string, path: string[]) => unknown): unknown {
  if (isSealed(value)) return replace(value[SEALED], path);
  if (Array.isArray(value)) return value.map((v, i) => mapSealed(v, [...path, String(i)], replace));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSealed(v, [...path, k], replace)]));
  return value;
}

/** The stored configuration with its secrets in clear (for the connector instance only). */
export const openConfiguration = (secrets: SecretBox, tenant: string, connector: string, stored: Json): Json =>
  mapSealed(stored, [], (sealed, path) => JSON.parse(secrets.openString(sealed, aad(tenant, connector, path))) as unknown) as Json;

/** The stored configuration as answers and events show it: every secret reads ********. */
export const maskConfiguration = (stored: Json): Json => mapSealed(stored, [], () => SECRET_MASK) as Json;

/**
 * The stored configuration with the secrets `schema` names opened, for the configuration registry's
 * portable form (config-type.ts): only fields its secretsOf hook names again are opened, so each is masked
 * or sealed on the way out; anything else still sealed (a type whose schema changed) stays sealed.
 */
export function openSchemaSecrets(secrets: SecretBox, tenant: string, connector: string, schema: Json | undefined, stored: Json): Json {
  const out = clone(stored);
  for (const path of secretPathsOf(schema)) {
    const value = getAt(out, path);
    if (isSealed(value)) setAt(out, path, JSON.parse(secrets.openString(value[SEALED], aad(tenant, connector, path))) as unknown);
  }
  return out;
}
