import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { compileOnce } from '../ajv/compile-once.js';
import type { PluginInstance, PluginManifest } from '@certwright/sdk';

// Vendor schemas carry annotations of their own (x-secret, x-*): allowed, not enforced.
const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true });
ajv.addKeyword({ keyword: 'x-secret', schemaType: 'boolean' });
// Vendor schemas use the standard formats (uri, email…): checked, not ignored with a warning at every boot.
(addFormatsPlugin as unknown as (instance: Ajv) => Ajv)(ajv);

/** Validates each configured instance of a plugin against its manifest's configSchema. */
export function checkInstances(manifest: PluginManifest, instances: readonly PluginInstance[]): string | null {
  if (instances.length > 1 && manifest.multiInstance !== true) {
    return `${instances.length} instances configured, but the plugin is not multiInstance`;
  }
  const names = new Set<string>();
  for (const instance of instances) {
    if (names.has(instance.name)) return `instance name "${instance.name}" is used twice`;
    names.add(instance.name);
  }
  if (!manifest.configSchema) return null;
  let validate;
  try {
    validate = compileOnce(ajv, manifest.configSchema);
  } catch (err) {
    return `configSchema is not a valid JSON Schema: ${(err as Error).message}`;
  }
  for (const instance of instances) {
    if (!validate(instance.config)) {
      const e = validate.errors![0]!;
      const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'config';
      return `instance "${instance.name}": ${where} ${e.message ?? 'is invalid'}`;
    }
  }
  return null;
}

/** Names of the fields a configSchema marks secret, so logs and API answers can mask them. */
export function secretFields(schema: Record<string, unknown> | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, { 'x-secret'?: boolean }>;
  return Object.entries(props)
    .filter(([, s]) => s['x-secret'] === true)
    .map(([name]) => name);
}
