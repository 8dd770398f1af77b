import type { Knex } from 'knex';
import type { ConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import { cloneJson, getPath, setPath } from '../paths.js';
import type { Actor, ConfigRegistry, RegisteredType } from '../registry.js';
import { changedFields, expectedAfterUpdate } from './diff.js';
import type { ImportRequest } from './document.js';
import { writePermission, type TransferAccess } from './export.js';
import { deriveKey, isSealed, open, secretAad } from './seal.js';

export type ImportAction = 'create' | 'update' | 'unchanged' | 'conflict';

export interface ImportItem {
  name: string;
  action: ImportAction;
  /** update: the top-level fields that change. */
  changed?: string[];
  /** conflict: why the object cannot be imported. */
  reason?: string;
}

/** The answer of an import (Horizon's HorizonImportedItemsSummary is `imported`; the rest is ours). */
export interface ImportResult {
  dryRun: boolean;
  /** Whether the document was written (false for a dry run and for a refused import). */
  applied: boolean;
  items: Record<string, ImportItem[]>;
  /** exportKey → names created or updated (empty unless applied). */
  imported: Record<string, string[]>;
}

/** Thrown inside the transaction to roll it back with the result computed so far. */
class Rollback {
  constructor(readonly items: Record<string, ImportItem[]>) {}
}

/**
 * Imports (or dry-runs) a document: every object through the registry's own create/update (validation,
 * references, secrets, events), in reference order, in one transaction, so an object may reference one
 * created earlier in the same document and a dry run reports exactly what the import would do. A dry
 * run always rolls back; an import with any conflict rolls back too: all or nothing.
 */
export async function importDocument(registry: ConfigRegistry, tenant: string, request: ImportRequest, access: TransferAccess, actor: Actor): Promise<ImportResult> {
  const { document, dryRun } = request;
  const params = document.info.secrets === 'omitted' ? null : document.info.secrets;
  // Derived once, before the transaction: it takes a few hundred milliseconds.
  const key = params && request.passphrase !== undefined ? await deriveKey(request.passphrase, params) : null;
  const noKey = params ? 'the document seals it: the passphrase is needed' : 'it is sealed, but the document declares its secrets omitted';

  const apply = async (trx: Knex.Transaction): Promise<Record<string, ImportItem[]>> => {
    const items: Record<string, ImportItem[]> = {};
    for (const t of registry.types()) {
      const objects = document.items[t.decl.exportKey];
      if (!objects) continue;
      const seen = new Set<string>();
      items[t.decl.exportKey] = [];
      for (const object of objects) {
        const name = String(object[t.key]);
        const conflict = (reason: string): void => void items[t.decl.exportKey]!.push({ name, action: 'conflict', reason });
        if (seen.has(name)) {
          conflict(`${t.key} "${name}" appears twice in ${t.decl.exportKey}`);
          continue;
        }
        seen.add(name);
        if (!access.canWrite(t)) {
          conflict(`requires the permission ${writePermission(t)}`);
          continue;
        }
        const opened = openSecrets(t, name, object, key, noKey);
        if (typeof opened === 'string') {
          conflict(opened);
          continue;
        }
        try {
          items[t.decl.exportKey]!.push(await applyOne(registry, t, tenant, name, opened, actor, trx));
        } catch (err) {
          // The registry's own problem (the type's -002, -004…) is the reason; anything else is a fault.
          if (!(err instanceof ProblemError)) throw err;
          conflict(err.message);
        }
      }
    }
    if (dryRun || Object.values(items).some((list) => list.some((i) => i.action === 'conflict'))) throw new Rollback(items);
    return items;
  };

  let items: Record<string, ImportItem[]>;
  let applied = false;
  try {
    items = await registry.transaction(apply);
    applied = true;
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
    items = err.items;
  }
  const imported: Record<string, string[]> = {};
  if (applied) {
    for (const [exportKey, list] of Object.entries(items)) {
      const names = list.filter((i) => i.action === 'create' || i.action === 'update').map((i) => i.name);
      if (names.length > 0) imported[exportKey] = names;
    }
  }
  return { dryRun, applied, items, imported };
}

/** The object with its sealed secrets opened, or why one does not open (never naming its value). */
function openSecrets(t: RegisteredType, name: string, object: ConfigObject, key: Buffer | null, noKey: string): ConfigObject | string {
  const out = cloneJson(object);
  for (const path of t.secretsOf(out)) {
    const value = getPath(out, path);
    if (!isSealed(value)) continue;
    if (!key) return `${path}: ${noKey}`;
    const plain = open(key, secretAad(t.decl.type, name, path), value);
    if (plain === null) return `${path}: cannot be opened (wrong passphrase, or the document was altered)`;
    setPath(out, path, plain);
  }
  return out;
}

async function applyOne(registry: ConfigRegistry, t: RegisteredType, tenant: string, name: string, input: ConfigObject, actor: Actor, trx: Knex.Transaction): Promise<ImportItem> {
  const type = t.decl.type;
  const current = await registry.portableOne(type, tenant, name, trx);
  if (!current) {
    // Types without POST (system configuration) are upserted by their PUT.
    if (t.decl.creatable === false) await registry.update(type, tenant, input, actor, trx);
    else await registry.create(type, tenant, input, actor, trx);
    return { name, action: 'create' };
  }
  // Nothing to change: no write, no event.
  if (changedFields(current, expectedAfterUpdate(t, input, current)).length === 0) return { name, action: 'unchanged' };
  await registry.update(type, tenant, input, actor, trx);
  // What was stored is the truth (hooks may normalise beyond what the prediction knows).
  const changed = changedFields(current, (await registry.portableOne(type, tenant, name, trx)) ?? {});
  return changed.length > 0 ? { name, action: 'update', changed } : { name, action: 'unchanged' };
}

/** The refusal of an import with conflicts: CONFIG-005 carrying the whole diff. */
export function importRefusal(result: ImportResult): ProblemError {
  const conflicts = Object.entries(result.items).flatMap(([key, list]) => list.filter((i) => i.action === 'conflict').map((i) => `${key}/${i.name}: ${i.reason ?? ''}`));
  const shown = conflicts.slice(0, 3).join('; ');
  const more = conflicts.length > 3 ? `; and ${conflicts.length - 3} more` : '';
  return new ProblemError('CONFIG-005', {
    message: `Nothing was imported: ${conflicts.length} object${conflicts.length === 1 ? '' : 's'} cannot be imported (${shown}${more})`,
    extra: { dryRun: false, applied: false, items: result.items, imported: {} },
  });
}

export const conflictCount = (result: ImportResult): number => Object.values(result.items).reduce((n, list) => n + list.filter((i) => i.action === 'conflict').length, 0);
