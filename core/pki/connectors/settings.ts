import { ProblemError } from '../../errors/index.js';
import { aliasOfType } from './horizon-types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSecret = (property: unknown): boolean => isObject(property) && property['x-secret'] === true;

/**
 * The keys of a connector body that are the connector's own fields (what GET answers, echoed back by a
 * GET → merge → PUT client). Every other top-level key is a setting.
 */
export const CONNECTOR_FIELDS: ReadonlySet<string> = new Set(['_id', 'version', 'createdAt', 'updatedAt', 'createdBy', 'updatedBy', 'name', 'type', 'description', 'enabled', 'queue', 'configuration']);

/**
 * The settings of a connector body, before validation. Certwright nests them under `configuration`;
 * Horizon sends a connector's settings at the top level beside name and type (pki-connectors.schema.json).
 * Both forms are accepted: a top-level key is a setting when the type's configSchema has that property, or
 * when it is a Horizon field of the type's Horizon alias (horizon-types.ts), which maps it. A top-level
 * setting wins over the same key under `configuration`: a client that GETs the connector, changes one
 * setting at the top level and PUTs the whole body back sends the stale value nested and the new one on top.
 * A top-level null puts the setting back to its default (Horizon's clear_fields); a null for a key that is
 * no setting says "no value", which is already so, and is let through. Any other key is refused
 * (PKI-CONN-002) naming the settings the type has, so a misspelt setting is not silently dropped. Answers
 * keep the settings under `configuration` only (secrets masked there): one place, no two copies to disagree.
 */
export function settingsOf(type: string, schema: Json | undefined, body: Json): Json {
  const settings: Json = isObject(body.configuration) ? structuredClone(body.configuration) : {};
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const horizon = aliasOfType(type);
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (CONNECTOR_FIELDS.has(key) || value === undefined) continue;
    const mapped = horizon?.fields[key];
    if (mapped) mapped(value, settings);
    else if (Object.hasOwn(properties, key)) {
      // A secret's null stays null: checkConfiguration clears it (left out, it would keep the stored one).
      if (value === null && !isSecret(properties[key])) delete settings[key];
      else settings[key] = structuredClone(value);
    } else if (value !== null) unknown.push(key);
  }
  if (unknown.length > 0) {
    const names = Object.keys(properties);
    const accepted = [names.length > 0 ? `its settings: ${names.join(', ')}` : 'it has no settings', ...(horizon ? [`Horizon fields of "${horizon.horizon}": ${Object.keys(horizon.fields).join(', ')}`] : [])];
    throw new ProblemError('PKI-CONN-002', {
      detail: `${unknown.map((k) => `"${k}"`).join(', ')}: neither a PKI connector field nor a setting of type "${type}" (${accepted.join('; ')})`,
    });
  }
  return settings;
}
