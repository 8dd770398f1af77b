import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import semver from 'semver';
import { manifestSchema, SDK_VERSION, type PluginManifest } from '@certwright/sdk';

// strictRequired off: the if/then rules name properties declared at the top level, which is fine.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
const validateSchema = ajv.compile<PluginManifest>(manifestSchema);

export type ManifestCheck = { ok: true; manifest: PluginManifest } | { ok: false; errors: string[]; partial?: Partial<PluginManifest> };

/** Reads and validates `<dir>/manifest.json`: JSON Schema, then what a schema cannot say (semver ranges). */
export function readManifest(dir: string): ManifestCheck {
  const file = resolve(dir, 'manifest.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, errors: [code === 'ENOENT' ? `no manifest.json in ${dir}` : `manifest.json is not valid JSON: ${(err as Error).message}`] };
  }
  return checkManifest(raw);
}

export function checkManifest(raw: unknown): ManifestCheck {
  const partial = typeof raw === 'object' && raw !== null ? (raw as Partial<PluginManifest>) : undefined;
  if (!validateSchema(raw)) {
    const errors = (validateSchema.errors ?? [])
      .filter((e) => e.keyword !== 'if')
      .map((e) => {
        const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '';
        if (e.keyword === 'required') return `${field ? `${field}.` : ''}${String(e.params.missingProperty)}: is required`;
        if (e.keyword === 'additionalProperties') return `${field ? `${field}.` : ''}${String(e.params.additionalProperty)}: is not a manifest field`;
        if (e.keyword === 'not' && !field) return 'capability: is only allowed on protocol plugins';
        if (e.keyword === 'enum') return `${field}: must be one of ${(e.params.allowedValues as string[]).join(', ')}`;
        return `${field || 'manifest'}: ${e.message ?? 'is invalid'}`;
      });
    return { ok: false, errors: [...new Set(errors)], partial };
  }
  const manifest = raw;
  if (semver.validRange(manifest.sdk) === null) return { ok: false, errors: [`sdk: "${manifest.sdk}" is not a semver range`], partial };
  return { ok: true, manifest };
}

/** Whether this kernel's SDK satisfies the plugin's declared range; the reason when not. */
export function checkSdkRange(manifest: PluginManifest): string | null {
  if (semver.satisfies(SDK_VERSION, manifest.sdk, { includePrerelease: true })) return null;
  return `built for SDK ${manifest.sdk}, but this Certwright provides SDK ${SDK_VERSION}`;
}
