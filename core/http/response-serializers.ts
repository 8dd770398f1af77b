import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<Factory>>;

const defaultFactory: Factory = SerializerSelector();
const pools = new Map<string, Map<string, Serializer>>();

/**
 * fastify's response serializer factory, with each compiled serializer kept by the text of its schema (and
 * of the shared schemas it may refer to). fast-json-stringify generates code for every route's response at
 * each boot; a process that boots kernels again and again (the tests) paid that each time. A serializer is
 * a pure function of those texts and the options, so equal texts share one.
 */
export const cachedSerializerFactory: Factory = (externalSchemas, options) => {
  const compile = defaultFactory(externalSchemas, options);
  const key = `${JSON.stringify(externalSchemas ?? null)}${JSON.stringify(options ?? null)}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new Map()));
  const serializers = pool;
  return (route) => {
    const text = JSON.stringify(route.schema ?? null);
    let serialize = serializers.get(text);
    if (!serialize) serializers.set(text, (serialize = compile(route)));
    return serialize;
  };
};
