import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import type { ConfigRegistry } from '../registry.js';
import { MAX_PBKDF2_ITERATIONS, MIN_PASSPHRASE_LENGTH, PBKDF2_ITERATIONS, type SealParams } from './seal.js';
import { compileOnce } from '../../ajv/compile-once.js';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });

/**
 * The export document (Horizon's HorizonExport: `{info, items}`, items keyed by each type's exportKey)
 * and the selection (Horizon's HorizonExportableItems), with their schemas: a malformed document is one
 * CONFIG-002 naming what is wrong, before anything is read or written.
 */

/** The document format this server writes and reads. */
export const FORMAT_VERSION = '1';
export const PRODUCT = 'certwright';

export interface ExportInfo {
  version: string;
  createdAt: string;
  product: string;
  /** `omitted`: secret fields left out; else how they are sealed under the export's passphrase. */
  secrets: 'omitted' | SealParams;
}

export interface ExportDocument {
  info: ExportInfo;
  items: Record<string, ConfigObject[]>;
}

export interface ImportRequest {
  document: ExportDocument;
  dryRun: boolean;
  passphrase?: string;
}

export interface ExportSelection {
  /** exportKey → selected names; null: everything the caller may read. */
  items: Map<string, Set<string>> | null;
  passphrase?: string;
}

/** The catalogue's entry (Horizon's HorizonExportableItem). */
export interface ExportableItem {
  name: string;
  description?: string;
}

const passphrase = { type: 'string', minLength: MIN_PASSPHRASE_LENGTH, maxLength: 1024, description: `At least ${MIN_PASSPHRASE_LENGTH} characters` } as const;

export const sealParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kdf', 'iterations', 'salt', 'cipher'],
  properties: {
    kdf: { const: 'pbkdf2-sha256' },
    iterations: { type: 'integer', minimum: PBKDF2_ITERATIONS, maximum: MAX_PBKDF2_ITERATIONS },
    salt: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
    cipher: { const: 'aes-256-gcm' },
  },
} as const;

const infoSchema = {
  type: 'object',
  required: ['version'],
  properties: {
    version: { type: 'string', description: `The format version (${FORMAT_VERSION})` },
    createdAt: { type: 'string' },
    product: { type: 'string' },
    secrets: { anyOf: [{ const: 'omitted' }, sealParamsSchema] },
  },
} as const;

/** The schemas of one registry's documents (every declared type's exportKey), for validation and OpenAPI. */
export function transferSchemas(registry: ConfigRegistry) {
  const types = registry.types();
  const objectArray = (key: string) => ({
    type: ['array', 'null'],
    maxItems: 100_000,
    items: { type: 'object', required: [key], properties: { [key]: { type: 'string', minLength: 1 } }, additionalProperties: true },
  });
  const items = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(types.map((t) => [t.decl.exportKey, objectArray(t.key)])),
  };
  const document = {
    type: 'object',
    additionalProperties: false,
    required: ['info'],
    properties: { info: infoSchema, items, dryRun: { type: 'boolean', description: 'Report what the import would do, write nothing' }, passphrase },
  };
  const selection = {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...Object.fromEntries(types.map((t) => [t.decl.exportKey, { ...objectArray('name'), description: `${t.decl.title} to export, by ${t.key}` }])),
      passphrase: { ...passphrase, description: 'Seal secret fields under this passphrase (without it they are left out)' },
    },
  };
  const catalogue = {
    type: 'object',
    properties: Object.fromEntries(
      types.map((t) => [t.decl.exportKey, { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, description: { type: 'string' } } } }]),
    ),
  };
  const anyObjects = { type: 'array', items: { type: 'object', additionalProperties: true } };
  const exported = {
    type: 'object',
    required: ['info', 'items'],
    properties: {
      info: { type: 'object', additionalProperties: true },
      items: { type: 'object', properties: Object.fromEntries(types.map((t) => [t.decl.exportKey, anyObjects])) },
    },
  };
  return { document, selection, catalogue, exported, knownKeys: types.map((t) => t.decl.exportKey) };
}

export type TransferSchemas = ReturnType<typeof transferSchemas>;

export interface TransferValidators {
  parseImport(body: unknown): ImportRequest;
  parseSelection(body: unknown): ExportSelection;
}

export function transferValidators(schemas: TransferSchemas): TransferValidators {
  const document = compileOnce(ajv, schemas.document);
  const selection = compileOnce(ajv, schemas.selection);
  const check = (validate: ValidateFunction, body: unknown, what: 'document' | 'selection'): void => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid(`The ${what === 'document' ? 'configuration document' : 'export selection'} must be a JSON object`);
    if (!validate(body)) throw invalid(describe(validate.errors ?? [], schemas.knownKeys, what));
  };
  return {
    parseImport(body) {
      check(document, body, 'document');
      const b = body as { info: ExportInfo; items?: Record<string, ConfigObject[] | null>; dryRun?: boolean; passphrase?: string };
      if (b.info.version !== FORMAT_VERSION) throw invalid(`info.version: "${b.info.version}" is not a format this server reads (it reads version "${FORMAT_VERSION}")`);
      const items: Record<string, ConfigObject[]> = {};
      for (const [key, list] of Object.entries(b.items ?? {})) if (list) items[key] = list;
      return {
        document: { info: { ...b.info, secrets: b.info.secrets ?? 'omitted' }, items },
        dryRun: b.dryRun === true,
        ...(b.passphrase !== undefined ? { passphrase: b.passphrase } : {}),
      };
    },
    parseSelection(body) {
      // No body at all: everything.
      if (body === undefined || body === null) return { items: null };
      check(selection, body, 'selection');
      const b = body as Record<string, unknown>;
      const items = new Map<string, Set<string>>();
      for (const key of schemas.knownKeys) {
        const list = b[key] as { name: string }[] | null | undefined;
        if (list) items.set(key, new Set(list.map((i) => i.name)));
      }
      return { items: items.size > 0 ? items : null, ...(typeof b.passphrase === 'string' ? { passphrase: b.passphrase } : {}) };
    },
  };
}

const invalid = (message: string): ProblemError => new ProblemError('CONFIG-002', { message });

/** `/items/credentials/3` → `items.credentials[3]`. */
function pathOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((out, p) => (/^\d+$/.test(p) ? `${out}[${p}]` : out ? `${out}.${p}` : p), '');
}

/** One message naming the first thing wrong. */
function describe(errors: ErrorObject[], knownKeys: readonly string[], what: 'document' | 'selection'): string {
  // A failed anyOf lists each branch's error first, then its own: the anyOf one names the field.
  const error = errors.find((e) => e.keyword === 'anyOf') ?? errors[0];
  if (!error) return 'The configuration document is not valid';
  const at = pathOf(error.instancePath);
  const field = (name: string): string => (at ? `${at}.${name}` : name);
  switch (error.keyword) {
    case 'additionalProperties': {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      if (at === 'items' || (at === '' && what === 'selection')) return `${field(extra)}: is not a known item key (known: ${knownKeys.join(', ')})`;
      if (at === '') return `${extra}: is not a member of the document (info, items, dryRun, passphrase)`;
      return `${field(extra)}: is not a known field`;
    }
    case 'required':
      return `${field((error.params as { missingProperty: string }).missingProperty)}: is required`;
    case 'anyOf':
      return at === 'info.secrets' ? 'info.secrets: must be "omitted" or the sealing parameters {kdf: "pbkdf2-sha256", iterations, salt, cipher: "aes-256-gcm"}' : `${at}: is not valid`;
    case 'type':
      return `${at || '(body)'}: must be ${(error.params as { type: string | string[] }).type.toString().replace(',null', '')}`;
    default:
      return `${at || '(body)'}: ${error.message ?? 'is not valid'}`;
  }
}
