import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDefinedPlugin, type PluginManifest } from '@certwright/sdk';
import { checkInstances } from './instances.js';
import { checkSdkRange, readManifest } from './manifest.js';

export type FolderCheck = { ok: true; manifest: PluginManifest } | { ok: false; errors: string[] };

/**
 * What a vendor runs before shipping (`certwright plugins validate <dir>`): the manifest against the
 * schema, the SDK range, the configSchema, the migrations folder, and that the entry loads and
 * default-exports definePlugin({...}).
 */
export async function validatePluginFolder(dir: string): Promise<FolderCheck> {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) return { ok: false, errors: [`${dir}: not a folder`] };
  const check = readManifest(root);
  if (!check.ok) return { ok: false, errors: check.errors };
  const manifest = check.manifest;
  const errors: string[] = [];
  const sdk = checkSdkRange(manifest);
  if (sdk) errors.push(`sdk: ${sdk}`);
  const schema = checkInstances(manifest, []);
  if (schema) errors.push(`configSchema: ${schema}`);
  if (manifest.migrations && !existsSync(resolve(root, manifest.migrations))) errors.push(`migrations: folder ${manifest.migrations} does not exist`);
  const entry = resolve(root, manifest.entry);
  if (!existsSync(entry)) {
    errors.push(`entry: ${manifest.entry} does not exist`);
  } else {
    try {
      const mod = (await import(pathToFileURL(entry).href)) as { default?: unknown };
      if (!isDefinedPlugin(mod.default)) errors.push(`entry: ${manifest.entry} does not default-export definePlugin({...})`);
    } catch (err) {
      errors.push(`entry: ${manifest.entry} failed to load: ${(err as Error).message}`);
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, manifest };
}
