import { ProblemError } from '../../errors/index.js';
import type { ConfigRegistry } from '../registry.js';
import { transferSchemas, transferValidators, type ExportDocument } from './document.js';
import { exportDocument, type TransferAccess } from './export.js';
import { importDocument, type ImportResult } from './import.js';
import { MIN_PASSPHRASE_LENGTH } from './seal.js';

/**
 * `certwright config export|import`: the same functions as the HTTP routes, called directly. The CLI acts
 * as principal `cli` with every right: whoever runs it already holds the database's credentials.
 */
export const CLI_ACTOR = { principal: 'cli' } as const;
const FULL_ACCESS: TransferAccess = { canRead: () => true, canWrite: () => true };
const TENANT = 'default';

/** A usage error (exit code 2): bad flag, unreadable or malformed document. */
export class CliUsageError extends Error {}

/** The passphrase held by the environment variable `name` (never a flag: flags show in process lists). */
export function passphraseFromEnv(name: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name === undefined) return undefined;
  const value = env[name];
  if (value === undefined || value === '') throw new CliUsageError(`the environment variable ${name} (--passphrase-env) is not set`);
  if (value.length < MIN_PASSPHRASE_LENGTH) throw new CliUsageError(`the passphrase in ${name} must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
  return value;
}

export async function cliExport(registry: ConfigRegistry, options: { types?: string; passphrase?: string }): Promise<ExportDocument> {
  let items: Map<string, Set<string>> | null = null;
  if (options.types !== undefined) {
    const all = registry.types();
    items = new Map();
    for (const wanted of options.types.split(',').map((s) => s.trim()).filter(Boolean)) {
      // A type by its identifier (`http-proxy`) or its export key (`proxies`).
      const t = all.find((x) => x.decl.type === wanted || x.decl.exportKey === wanted);
      if (!t) throw new CliUsageError(`--types: no configuration type "${wanted}" (known: ${all.map((x) => x.decl.type).join(', ')})`);
      items.set(t.decl.exportKey, new Set((await registry.listStored(t.decl.type, TENANT)).map((s) => s.name)));
    }
    if (items.size === 0) throw new CliUsageError('--types: name at least one type');
  }
  return exportDocument(registry, TENANT, { items, ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}) }, FULL_ACCESS);
}

export async function cliImport(registry: ConfigRegistry, text: string, options: { dryRun?: boolean; passphrase?: string }): Promise<ImportResult> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliUsageError('the file is not JSON');
  }
  let request;
  try {
    request = transferValidators(transferSchemas(registry)).parseImport(body);
  } catch (err) {
    if (err instanceof ProblemError) throw new CliUsageError(err.message);
    throw err;
  }
  if (options.dryRun) request.dryRun = true;
  if (options.passphrase !== undefined) request.passphrase = options.passphrase;
  return importDocument(registry, TENANT, request, FULL_ACCESS, CLI_ACTOR);
}
