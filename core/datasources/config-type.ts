import type { ConfigObject, ConfigObjectType } from '@certwright/sdk';
import { FilterParser } from 'ldapts';
import { description, objectName, reference } from '../config-objects/types/common.js';
import { usableCredential } from '../config-objects/types/credentials.js';
import { nextCronOccurrence } from '../scheduler/tasks/cron.js';
import { selectProblem } from './sql-guard.js';
import { DATASOURCE_KINDS, type Datasource, type DatasourceKind } from './model.js';

export const DATASOURCE_TYPE = 'datasource';
/**
 * The permission section of datasources and their flows (configuration:datasources:read|write): their own, as a
 * datasource reaches internal services and databases with the platform's network position.
 */
export const DATASOURCE_SECTION = 'datasources';
/** Kinds of credential each way of authenticating needs (core/config-objects/types/credentials.ts). */
const CREDENTIAL_KIND = { basic: 'password', bearer: 'raw', header: 'raw', ldap: 'password', database: 'password' } as const;

const url = { type: 'string', minLength: 1, maxLength: 2048 } as const;

/** JSON Schema of each kind's settings (`http`, `ldap`, `database`: the one named by `kind`). */
export const KIND_SCHEMAS = {
  http: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { ...url, description: 'http:// or https:// URL answering JSON (no credentials in it: name a credential)' },
      method: { type: 'string', enum: ['GET', 'POST'], description: 'GET (default) or POST' },
      headers: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 4096 }, description: 'Extra request headers (not Authorization: name a credential)' },
      body: { type: 'string', maxLength: 65536, description: 'POST: the request body, as sent' },
      recordsPath: { type: 'string', maxLength: 256, pattern: '^([A-Za-z0-9_$@-]+(\\.[A-Za-z0-9_$@-]+)*)?$', description: 'Dotted path to the array of records in the answer (empty: the answer itself)' },
      authentication: { type: 'string', enum: ['none', 'basic', 'bearer', 'header'], description: 'basic: a password credential; bearer or header: a raw credential' },
      authenticationHeader: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9-]+$', description: 'header: the header carrying the raw credential (X-API-Key)' },
    },
  },
  ldap: {
    type: 'object',
    additionalProperties: false,
    required: ['url', 'baseDn'],
    properties: {
      url: { ...url, description: 'ldap:// or ldaps:// URL of the directory' },
      baseDn: { type: 'string', minLength: 1, maxLength: 1024 },
      scope: { type: 'string', enum: ['base', 'one', 'sub'], description: 'sub (default), one or base' },
      filter: { type: 'string', minLength: 1, maxLength: 4096, description: 'LDAP filter (default (objectClass=*))' },
      attributes: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 128 }, description: 'Attributes read (default: all user attributes)' },
      bindDn: { type: 'string', minLength: 1, maxLength: 1024, description: 'DN to bind as; its password is the credential (left out: the credential\'s login, or an anonymous bind)' },
    },
  },
  database: {
    type: 'object',
    additionalProperties: false,
    required: ['url', 'query'],
    properties: {
      url: { ...url, description: 'mysql://user@host:port/database (MariaDB, MySQL) or sqlite:<file> (relative to the data directory); the password is the credential' },
      query: { type: 'string', minLength: 1, maxLength: 16384, description: 'One SELECT, with ? placeholders for its parameters' },
      parameters: { type: 'array', maxItems: 64, items: { type: ['string', 'number', 'boolean', 'null'] }, description: 'Values bound to the ? placeholders, in order' },
    },
  },
} as const;

export const DATASOURCE_PROPERTIES = {
  name: objectName,
  description,
  kind: { type: 'string', enum: [...DATASOURCE_KINDS], description: 'http (a JSON endpoint), ldap (a directory search) or database (a SELECT)' },
  ...KIND_SCHEMAS,
  credential: { ...reference, description: 'The credential authenticating to the source (http basic: password; bearer/header: raw; ldap and database: password)' },
  keyField: { type: 'string', minLength: 1, maxLength: 128, description: 'The record field Lookup() matches keys against (ldap: an attribute, or dn)' },
  refresh: { type: ['string', 'null'], maxLength: 128, description: 'CRON expression (UTC) of scheduled fetches; none: fetched on demand only' },
  timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000, description: 'Deadline of one fetch (default 10000)' },
  maxRecords: { type: 'integer', minimum: 1, maximum: 10_000, description: 'More records than this fail the fetch (default 1000)' },
} as const;

/**
 * Datasources (/api/v1/datasources/, spec "Configuration capability"): external data — a JSON endpoint reached
 * through the egress proxies, a directory search, a database SELECT — fetched on a CRON schedule or on demand,
 * whose last good answer computation rules read (Lookup("cmdb", {{csr.subject.cn}}, "owner")). Secrets are never
 * held here: a datasource names a credential.
 */
export const datasourceType: ConfigObjectType = {
  type: DATASOURCE_TYPE,
  title: 'Datasources',
  noun: 'datasource',
  exportKey: 'datasources',
  description: 'External data (HTTP JSON, LDAP, database SELECT) fetched on schedule or on demand, read by computation rules through Lookup().',
  basePath: '/api/v1/datasources/',
  tag: 'datasources',
  section: DATASOURCE_SECTION,
  errorFamily: 'DATASOURCE',
  properties: DATASOURCE_PROPERTIES,
  required: ['name', 'kind', 'keyField'],
  references: [{ field: 'credential', type: 'credential' }],
  hooks: {
    normalize: (object) => withDefaults(object),
    async validate(object, context) {
      const problem = definitionProblem(object as unknown as Datasource);
      if (problem) return problem;
      if (typeof object.credential === 'string') {
        const usable = usableCredential(await context.lookup('credential', object.credential), object.credential, credentialKindOf(object as unknown as Datasource), 'datasource');
        if (!usable.ok) return `credential: ${usable.reason}`;
      }
    },
  },
};

/** The defaults a stored datasource carries (so a reader never guesses them). */
export function withDefaults(object: ConfigObject): ConfigObject {
  const out: ConfigObject = { timeoutMs: 10_000, maxRecords: 1000, ...object };
  if (out.kind === 'http' && isObject(out.http)) out.http = { method: 'GET', recordsPath: '', authentication: out.credential ? 'bearer' : 'none', ...out.http };
  if (out.kind === 'ldap' && isObject(out.ldap)) out.ldap = { scope: 'sub', filter: '(objectClass=*)', ...out.ldap };
  if (out.kind === 'database' && isObject(out.database)) out.database = { parameters: [], ...out.database };
  return out;
}

/** The kind of credential a datasource needs. */
export function credentialKindOf(d: Datasource): string {
  if (d.kind === 'http') {
    const auth = d.http?.authentication;
    return CREDENTIAL_KIND[auth === undefined || auth === 'none' ? 'bearer' : auth];
  }
  return CREDENTIAL_KIND[d.kind];
}

/**
 * What the schema cannot say, naming the field: the kind's settings present (and no other kind's), URLs of the
 * kind's schemes without credentials in them, a single SELECT, a filter that parses, a CRON that runs.
 * Shared by the collection and by inline flow definitions.
 */
export function definitionProblem(d: Datasource): string | null {
  const kind: DatasourceKind = d.kind;
  for (const other of DATASOURCE_KINDS) if (other !== kind && d[other] !== undefined) return `${other}: is not a field of a ${kind} datasource`;
  if (!isObject(d[kind])) return `${kind}: the ${kind} settings are required for a ${kind} datasource`;
  if (kind === 'http') {
    const http = d.http!;
    const problem = urlProblem(http.url, ['http:', 'https:']);
    if (problem) return `http.url: ${problem}`;
    const auth = http.authentication ?? 'none';
    if (Object.keys(http.headers ?? {}).some((h) => ['authorization', 'proxy-authorization', 'cookie'].includes(h.toLowerCase()))) return 'http.headers: carry no Authorization or Cookie header; name a credential instead';
    if (auth !== 'none' && typeof d.credential !== 'string') return `credential: required with http.authentication ${auth}`;
    if (auth === 'none' && typeof d.credential === 'string') return 'http.authentication: say how the credential is sent (basic, bearer or header)';
    if (auth === 'header' && !http.authenticationHeader) return 'http.authenticationHeader: required with http.authentication header';
    if (http.body !== undefined && (http.method ?? 'GET') !== 'POST') return 'http.body: only a POST sends a body';
  }
  if (kind === 'ldap') {
    const ldap = d.ldap!;
    const problem = urlProblem(ldap.url, ['ldap:', 'ldaps:']);
    if (problem) return `ldap.url: ${problem}`;
    try {
      FilterParser.parseString(ldap.filter ?? '(objectClass=*)');
    } catch (err) {
      return `ldap.filter: not an LDAP filter (${(err as Error).message})`;
    }
    if (ldap.bindDn !== undefined && typeof d.credential !== 'string') return 'credential: required with ldap.bindDn (its password binds)';
  }
  if (kind === 'database') {
    const db = d.database!;
    const dialect = databaseDialect(db.url);
    if (!dialect) return 'database.url: must be mysql://, mariadb:// or sqlite:';
    if (dialect === 'sqlite' && db.url.replace(/^sqlite:(\/\/)?/i, '').trim() === '') return 'database.url: sqlite: names no file';
    if (dialect === 'mysql') {
      const problem = urlProblem(db.url.replace(/^mariadb:/, 'mysql:'), ['mysql:']);
      if (problem) return `database.url: ${problem}`;
    }
    const problem = selectProblem(db.query, dialect, (db.parameters ?? []).length);
    if (problem) return `database.query: ${problem}`;
  }
  if (typeof d.refresh === 'string' && d.refresh.trim() !== '') {
    const next = nextCronOccurrence(d.refresh, 'UTC');
    if (!next.ok) return `refresh: not a CRON expression (${next.reason})`;
  }
  return null;
}

/** The dialect a database URL names, or null. */
export function databaseDialect(raw: string): 'sqlite' | 'mysql' | null {
  if (/^sqlite:/i.test(raw)) return 'sqlite';
  if (/^(mysql|mariadb):\/\//i.test(raw)) return 'mysql';
  return null;
}

function urlProblem(raw: string, schemes: string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return 'not a URL';
  }
  if (!schemes.includes(parsed.protocol)) return `the scheme must be ${schemes.map((s) => `${s}//`).join(' or ')}`;
  if (!parsed.hostname) return 'names no host';
  if (parsed.password) return 'carries a password: name a credential instead';
  if (parsed.username && !schemes.includes('mysql:')) return 'carries a user name: name a credential instead';
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
