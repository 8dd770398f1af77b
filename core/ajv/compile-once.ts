import type { Ajv, ValidateFunction } from 'ajv';

const byInstance = new WeakMap<Ajv, Map<string, ValidateFunction>>();

/**
 * `ajv.compile`, once per schema text and Ajv instance. Schemas built at each boot (a configuration type's
 * input schema, the transfer document, a plugin's configSchema read from its manifest) are new objects every
 * time, so Ajv's own cache (by object) misses and keeps each copy: a process that boots kernels again and
 * again (the tests, hundreds of boots) paid the code generation each time and grew by every copy. A
 * validator is a pure function of its schema and the instance's options, so equal texts share one.
 */
export function compileOnce<T = unknown>(ajv: Ajv, schema: object): ValidateFunction<T> {
  let cache = byInstance.get(ajv);
  if (!cache) byInstance.set(ajv, (cache = new Map()));
  const text = JSON.stringify(schema);
  let validate = cache.get(text);
  if (!validate) cache.set(text, (validate = ajv.compile(schema)));
  return validate as ValidateFunction<T>;
}
