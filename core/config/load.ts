import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ENV_BINDINGS } from './env.js';
import type { CertwrightConfig, DeepPartial } from './types.js';

const CONFIG_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../config');
export const DEFAULT_CONFIG_FILE = resolve(CONFIG_DIR, 'default.yaml');
const SCHEMA = JSON.parse(readFileSync(resolve(CONFIG_DIR, 'schema.json'), 'utf8')) as object;

/** One line for the operator: which key, where it came from, what is wrong. Never the value of a secret. */
export class ConfigError extends Error {
  constructor(readonly key: string, readonly reason: string) {
    super(`invalid configuration: ${key} ${reason}`);
    this.name = 'ConfigError';
  }
}

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge where arrays and scalars replace; records which layer set each leaf path. */
function merge(target: Tree, source: Tree, origin: string, origins: Map<string, string>, prefix = ''): void {
  for (const [key, value] of Object.entries(source)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isTree(value) && isTree(target[key])) {
      merge(target[key] as Tree, value, origin, origins, path);
    } else {
      target[key] = structuredClone(value);
      origins.set(path, origin);
    }
  }
}

function readYaml(file: string, label: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(label, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'} (${file})`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(label, `is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isTree(doc)) throw new ConfigError(label, 'must be a YAML mapping');
  return doc;
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });
const validate = ajv.compile<CertwrightConfig>(SCHEMA);

function describe(error: ErrorObject, origins: Map<string, string>): ConfigError {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = segments.join('.');
  let reason = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties') {
    path = [...segments, String(error.params.additionalProperty)].join('.');
    reason = 'is not a known key';
  } else if (error.keyword === 'enum') {
    reason = `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
  } else if (error.keyword === 'pattern') {
    reason = 'has an invalid format';
  }
  // Name the environment variable or file that set the key, walking up to the nearest recorded path.
  let origin: string | undefined;
  for (let i = segments.length; i >= 0 && !origin; i--) origin = origins.get(segments.slice(0, i).join('.'));
  const key = origin && !origin.startsWith('file ') ? `${origin} (${path || 'root'})` : `${path || 'root'}${origin ? ` (${origin.slice(5)})` : ''}`;
  return new ConfigError(key, reason);
}

/**
 * With anyOf (null or a value), ajv reports a failure per branch; the useful one is the deepest, not
 * "must be null" nor the anyOf summary.
 */
function mostSpecific(errors: ErrorObject[]): ErrorObject {
  const useful = errors.filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null'));
  const pool = useful.length ? useful : errors;
  return pool.reduce((best, e) => (e.instancePath.length > best.instancePath.length ? e : best), pool[0]!);
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Applied last (tests, CLI flags). */
  overrides?: DeepPartial<CertwrightConfig>;
  cwd?: string;
}

/** default.yaml → CERTWRIGHT_CONFIG file → environment → overrides, validated with ajv. */
export function loadConfig(options: LoadConfigOptions = {}): CertwrightConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const origins = new Map<string, string>();
  const tree: Tree = {};
  merge(tree, readYaml(DEFAULT_CONFIG_FILE, 'config/default.yaml'), `file ${DEFAULT_CONFIG_FILE}`, origins);

  const extra = env.CERTWRIGHT_CONFIG;
  if (extra) {
    const file = resolve(cwd, extra);
    merge(tree, readYaml(file, 'CERTWRIGHT_CONFIG'), `file ${file}`, origins);
  }
  for (const binding of ENV_BINDINGS) {
    const raw = env[binding.name];
    if (raw === undefined || raw === '') continue;
    let node = tree;
    for (const key of binding.path.slice(0, -1)) node = (node[key] ??= {}) as Tree;
    node[binding.path.at(-1)!] = binding.parse(raw);
    origins.set(binding.path.join('.'), binding.name);
  }
  if (options.overrides) merge(tree, options.overrides as Tree, 'override', origins);

  if (!validate(tree)) throw describe(mostSpecific(validate.errors!), origins);
  const config = tree as unknown as CertwrightConfig;
  config.dataDir = resolve(cwd, config.dataDir);
  return config;
}
