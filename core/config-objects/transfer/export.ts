import type { ConfigObject } from '@certwright/sdk';
import { ProblemError } from '../../errors/index.js';
import { getPath, setPath } from '../paths.js';
import type { ConfigRegistry, RegisteredType } from '../registry.js';
import { FORMAT_VERSION, PRODUCT, type ExportableItem, type ExportDocument, type ExportSelection } from './document.js';
import { newSealing, seal, secretAad } from './seal.js';

/** What the caller may do with each type (the HTTP caller's permissions, or the CLI's full rights). */
export interface TransferAccess {
  canRead(t: RegisteredType): boolean;
  canWrite(t: RegisteredType): boolean;
}

export const readPermission = (t: RegisteredType): string => `configuration:${t.decl.section}:read`;
export const writePermission = (t: RegisteredType): string => `configuration:${t.decl.section}:write`;

/** Byte order, not locale order: the same document on every engine and host. */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every object of every type the caller may read, by exportKey: Horizon's HorizonExportableItems. */
export async function exportCatalogue(registry: ConfigRegistry, tenant: string, access: TransferAccess): Promise<Record<string, ExportableItem[]>> {
  const out: Record<string, ExportableItem[]> = {};
  for (const t of registry.types()) {
    if (!access.canRead(t)) continue;
    const objects = await registry.list(t.decl.type, tenant);
    out[t.decl.exportKey] = objects
      .map((o) => ({ name: String(o[t.key]), ...(typeof o.description === 'string' ? { description: o.description } : {}) }))
      .sort((a, b) => byName(a.name, b.name));
  }
  return out;
}

/**
 * The export document of a selection, in reference order, objects by name, without `_id`. Secrets are
 * read open (portable form) only to be left out or sealed under the passphrase here: never in clear.
 */
export async function exportDocument(registry: ConfigRegistry, tenant: string, selection: ExportSelection, access: TransferAccess, now = new Date()): Promise<ExportDocument> {
  const sealing = selection.passphrase !== undefined ? await newSealing(selection.passphrase) : null;
  const types = registry.types();
  if (selection.items) {
    for (const key of selection.items.keys()) {
      const t = types.find((x) => x.decl.exportKey === key)!;
      if (!access.canRead(t)) throw new ProblemError('SEC-PERM-001', { message: `Exporting ${key} requires the permission ${readPermission(t)}` });
    }
  }
  const items: Record<string, ConfigObject[]> = {};
  for (const t of types) {
    const wanted = selection.items ? selection.items.get(t.decl.exportKey) : undefined;
    if (selection.items ? !wanted : !access.canRead(t)) continue;
    let objects = await registry.portable(t.decl.type, tenant);
    if (wanted) {
      const present = new Set(objects.map((o) => String(o[t.key])));
      const missing = [...wanted].filter((n) => !present.has(n)).sort(byName);
      if (missing.length > 0) throw new ProblemError('CONFIG-002', { message: `${t.decl.exportKey}: no ${t.decl.noun} is named ${missing.map((n) => `"${n}"`).join(', ')}` });
      objects = objects.filter((o) => wanted.has(String(o[t.key])));
    }
    items[t.decl.exportKey] = objects
      .map((o) => {
        const out: ConfigObject = { ...o };
        delete out._id;
        const name = String(o[t.key]);
        for (const path of t.secretsOf(o)) {
          const value = getPath(out, path);
          if (value === undefined || value === null) continue;
          setPath(out, path, sealing ? seal(sealing.key, secretAad(t.decl.type, name, path), typeof value === 'string' ? value : JSON.stringify(value)) : undefined);
        }
        return out;
      })
      .sort((a, b) => byName(String(a[t.key]), String(b[t.key])));
  }
  return { info: { version: FORMAT_VERSION, createdAt: now.toISOString(), product: PRODUCT, secrets: sealing ? sealing.params : 'omitted' }, items };
}
