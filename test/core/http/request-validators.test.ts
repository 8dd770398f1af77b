import Fastify, { type FastifyInstance } from 'fastify';
import t from 'tap';
import { cachedValidatorFactory, keepHeaderSchemaLowercasing } from '../../../core/http/request-validators.js';

// Validators are shared between fastify instances of one process by schema text: sharing must never hand one
// instance another's (different) schema, and fastify must still match header schemas case-insensitively.
async function server(minLength: number): Promise<FastifyInstance> {
  const app = Fastify({
    schemaController: { compilersFactory: { buildValidator: cachedValidatorFactory } },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array' } },
  });
  keepHeaderSchemaLowercasing(app);
  const schema = {
    headers: { type: 'object', required: ['X-Token'], properties: { 'X-Token': { type: 'string', minLength } } },
    querystring: { type: 'object', properties: { n: { type: 'integer', maximum: minLength } }, additionalProperties: false },
  };
  app.get('/thing', { schema }, async (request) => ({ token: request.headers['x-token'], n: (request.query as { n?: number }).n ?? null }));
  await app.ready();
  return app;
}

t.test('a header schema written with capitals still matches the (lowercased) request header', async (t) => {
  const app = await server(3);
  t.teardown(() => app.close());
  const ok = await app.inject({ url: '/thing?n=2', headers: { 'X-Token': 'abcd' } });
  t.equal(ok.statusCode, 200);
  t.same(ok.json(), { token: 'abcd', n: 2 }, 'query coerced to an integer');
  t.equal((await app.inject({ url: '/thing' })).statusCode, 400, 'missing required header');
  t.equal((await app.inject({ url: '/thing', headers: { 'x-token': 'ab' } })).statusCode, 400, 'too short');
  t.equal((await app.inject({ url: '/thing?n=2&x=1', headers: { 'x-token': 'abcd' } })).statusCode, 400, 'unknown query field');
});

t.test('instances with the same route but different schemas keep their own validators', async (t) => {
  const loose = await server(3);
  const strict = await server(10);
  t.teardown(() => Promise.all([loose.close(), strict.close()]));
  const headers = { 'x-token': 'abcd' };
  t.equal((await loose.inject({ url: '/thing?n=5', headers })).statusCode, 400, 'n=5 exceeds the loose maximum 3');
  t.equal((await strict.inject({ url: '/thing?n=5', headers })).statusCode, 400, 'a 4-character token is too short for the strict one');
  t.equal((await strict.inject({ url: '/thing?n=5', headers: { 'x-token': 'abcdefghijk' } })).statusCode, 200);
  t.equal((await loose.inject({ url: '/thing?n=3', headers })).statusCode, 200, 'the loose one is unchanged');
  const again = await server(3);
  t.teardown(() => again.close());
  t.equal((await again.inject({ url: '/thing?n=3', headers })).statusCode, 200, 'a third instance with the first schema behaves like it');
});
