/**
 * What Go's encoding/json does with an answer, for the horizon-go contract tests (test/compat/go-v1.test.ts,
 * go-v2.test.ts): a field decoded into a Go type must have a compatible JSON type (a number with a fraction
 * into an int, a string into a bool, an object into a slice, ... is an UnmarshalTypeError and the SDK call
 * fails), `null` leaves the zero value, unknown keys are ignored. v2 models add required keys (checked in
 * their UnmarshalJSON) and strict enums. Shapes here are written from the SDK structs and docs, named in
 * each test.
 */
export type GoShape =
  | 'string'
  | 'int'
  | 'bool'
  | 'any'
  | { enum: readonly string[] }
  | { array: GoShape }
  | { object: Record<string, GoShape>; required?: readonly string[] };

/** Every way `value` would fail to decode into `shape` ('' = decodes). */
export function goDecodeErrors(value: unknown, shape: GoShape, path = '$'): string[] {
  if (shape === 'any') return [];
  if (value === null) return [];
  if (shape === 'string') return typeof value === 'string' ? [] : [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not a string`];
  if (shape === 'int') return Number.isInteger(value) ? [] : [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not an integer`];
  if (shape === 'bool') return typeof value === 'boolean' ? [] : [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not a boolean`];
  if ('enum' in shape) return typeof value === 'string' && shape.enum.includes(value) ? [] : [`${path}: ${JSON.stringify(value)} is not one of ${shape.enum.join('|')}`];
  if ('array' in shape) {
    if (!Array.isArray(value)) return [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not an array`];
    return value.flatMap((v, i) => goDecodeErrors(v, shape.array, `${path}[${i}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) return [`${path}: ${JSON.stringify(value)?.slice(0, 60)} is not an object`];
  const obj = value as Record<string, unknown>;
  const errors = (shape.required ?? []).filter((k) => !(k in obj)).map((k) => `${path}: required key ${k} missing`);
  for (const [k, s] of Object.entries(shape.object)) if (k in obj) errors.push(...goDecodeErrors(obj[k], s, `${path}.${k}`));
  return errors;
}

/** Go's url.PathEscape: escapes all but unreserved characters and $&+:=@ (what both SDKs put in a path). */
export function goPathEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~$&+:=@]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's JsonCheck (v2 client.go): the content types the generated client decodes as JSON. */
export const GO_V2_JSON_CHECK = /(?:application|text)\/(?:[^;]+\+)?json/i;
