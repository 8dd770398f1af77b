import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance } from 'fastify';

type Factory = ReturnType<typeof AjvCompiler>;
type Compile = ReturnType<Factory>;
type Validator = ReturnType<Compile>;
/** What fastify hands a validator compiler (the package's own typing says a bare schema; it is this). */
interface RouteSchema { schema?: unknown; httpPart?: string; method?: string; url?: string }

// One pool per process: fastify's own factory keeps one Ajv instance per (shared schemas, options) text, but a
// new fastify instance gets a new pool, so each boot built a new Ajv and recompiled every route's schemas.
const sharedPool: Factory = AjvCompiler();
const compiled = new Map<string, Map<string, Validator>>();

/**
 * fastify's request validator factory, with each compiled validator kept by the text of its schema and request
 * part (and of the shared schemas and Ajv options it is compiled with). A validator is a pure function of those
 * texts; the tests boot hundreds of kernels per process run and paid ~0.5 s of Ajv code generation at each.
 */
const validatorFactory = (externalSchemas: Parameters<Factory>[0], options?: Parameters<Factory>[1]): ((route: RouteSchema) => Validator) => {
  const compile = sharedPool(externalSchemas, options);
  const key = `${JSON.stringify(externalSchemas ?? null)}${JSON.stringify(options?.customOptions ?? null)}${String(options?.mode)}`;
  let pool = compiled.get(key);
  if (!pool) compiled.set(key, (pool = new Map()));
  const validators = pool;
  return (route) => {
    const text = `${route.httpPart ?? ''}\n${JSON.stringify(route.schema ?? null)}`;
    let validate = validators.get(text);
    if (!validate) validators.set(text, (validate = compile(route as Parameters<Compile>[0])));
    return validate;
  };
};
export const cachedValidatorFactory = validatorFactory as unknown as Factory;

/**
 * Passing a validator factory makes fastify treat it as a custom (Joi-like) compiler, which turns off its
 * lowercasing of header schemas (header names arrive lowercased). This factory is fastify's own Ajv compiler,
 * so the instance is told so; child scopes copy the flag when they are created, hence before any register.
 */
export function keepHeaderSchemaLowercasing(app: FastifyInstance): void {
  const symbol = Object.getOwnPropertySymbols(app).find((s) => s.description === 'fastify.schemaController');
  const controller = symbol ? (app as unknown as Record<symbol, { isCustomValidatorCompiler?: boolean }>)[symbol] : undefined;
  if (!controller || controller.isCustomValidatorCompiler === undefined) throw new Error('fastify schema controller not found (fastify internals changed)');
  controller.isCustomValidatorCompiler = false;
}
