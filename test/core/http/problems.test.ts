import type { InjectOptions } from 'fastify';
import t, { type Test } from 'tap';
import { ERROR_CATALOGUE } from '../../../core/errors/index.js';
import { ADMIN_HEADERS, bootKernel, LogCapture, tempDir } from '../../helpers/kernel.js';
import { writeProtocolPlugin } from '../../helpers/plugins.js';

// A protocol plugin with a strict JSON route and a route that fails inside, to drive the error paths.
const ROUTES = `
scope.route({
  method: 'POST',
  url: '/fixture/echo',
  schema: { body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', maxLength: 64 } } } },
  handler: async (request) => ({ hello: request.body.name }),
});
scope.route({ method: 'GET', url: '/fixture/boom', handler: async () => { throw new Error('db password=hunter2 at /srv/internal.ts:42'); } });
`;

async function setup(t: Test, capture = new LogCapture()) {
  const plugins = tempDir(t);
  writeProtocolPlugin(plugins, 'webra', ROUTES);
  const kernel = await bootKernel(t, { plugins: { paths: [plugins] }, server: { bodyLimit: 4096 } }, { capture });
  return kernel;
}

const json = { 'content-type': 'application/json', host: 'localhost' };

t.test('every bad input gets a catalogued problem+json answer', async (t) => {
  const kernel = await setup(t);
  const cases: { name: string; request: InjectOptions; status: number; code: string }[] = [
    { name: 'unknown route', request: { method: 'GET', url: '/api/v1/unknown', headers: { host: 'localhost' } }, status: 404, code: 'HTTP-001' },
    { name: 'unknown method on a known path', request: { method: 'DELETE', url: '/api/v1/endpoints/', headers: { host: 'localhost' } }, status: 404, code: 'HTTP-001' },
    { name: 'malformed JSON', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: '{"name": "a",' }, status: 400, code: 'HTTP-002' },
    { name: 'empty JSON body', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: '' }, status: 400, code: 'HTTP-002' },
    { name: 'JSON that is not an object', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: '"text"' }, status: 400, code: 'HTTP-003' },
    { name: 'prototype poisoning', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: '{"name":"a","__proto__":{"x":1}}' }, status: 400, code: 'HTTP-002' },
    { name: 'unknown field', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: { name: 'a', extra: 1 } }, status: 400, code: 'HTTP-003' },
    { name: 'missing field', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: {} }, status: 400, code: 'HTTP-003' },
    { name: 'wrong type', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: { name: { first: 'a' } } }, status: 400, code: 'HTTP-003' },
    { name: 'text/plain body', request: { method: 'POST', url: '/fixture/echo', headers: { 'content-type': 'text/plain', host: 'localhost' }, payload: 'name=a' }, status: 415, code: 'HTTP-004' },
    { name: 'form body', request: { method: 'POST', url: '/fixture/echo', headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'localhost' }, payload: 'name=a' }, status: 415, code: 'HTTP-004' },
    { name: 'body over the limit', request: { method: 'POST', url: '/fixture/echo', headers: json, payload: JSON.stringify({ name: 'x'.repeat(5000) }) }, status: 413, code: 'HTTP-005' },
    { name: 'a path that is not UTF-8 (%FF)', request: { method: 'GET', url: '/api/v1/cas/%FF', headers: { host: 'localhost' } }, status: 400, code: 'HTTP-008' },
    { name: 'a path with a lone surrogate (%ED%A0%80)', request: { method: 'GET', url: '/api/v1/cas/%ED%A0%80', headers: { host: 'localhost' } }, status: 400, code: 'HTTP-008' },
    { name: 'a path parameter over maxParamLength', request: { method: 'GET', url: `/api/v1/cas/${'a'.repeat(17000)}`, headers: { host: 'localhost' } }, status: 400, code: 'HTTP-008' },
    { name: 'an invalid Content-Length', request: { method: 'POST', url: '/fixture/echo', headers: { ...json, 'content-length': '9' }, payload: '{"name":"a"}' }, status: 400, code: 'HTTP-002' },
    { name: 'a failure inside a handler', request: { method: 'GET', url: '/fixture/boom', headers: { host: 'localhost' } }, status: 500, code: 'SRV-001' },
  ];
  for (const c of cases) {
    const res = await kernel.app.inject(c.request);
    t.equal(res.statusCode, c.status, `${c.name}: status`);
    t.equal(res.headers['content-type'], 'application/problem+json', `${c.name}: content type exactly`);
    const body = res.json() as Record<string, unknown>;
    t.equal(body.error, c.code, `${c.name}: code`);
    t.equal(body.status, c.status, `${c.name}: status in body`);
    t.equal(body.title, ERROR_CATALOGUE[c.code as keyof typeof ERROR_CATALOGUE].title, `${c.name}: title from the catalogue`);
    t.type(body.message, 'string');
    t.notMatch(res.body, /hunter2|internal\.ts|at \w+ \(|node_modules|FST_/, `${c.name}: no internals leak`);
  }
});

t.test('answers fastify gives before routing: the host gate first, no echo of the path', async (t) => {
  const kernel = await setup(t);
  for (const url of ['/api/v1/cas/%FF', '/api/v1/cas/%ED%A0%80', `/api/v1/cas/${'b'.repeat(17000)}`]) {
    const wrongHost = await kernel.app.inject({ method: 'GET', url, headers: { host: 'evil.example' } });
    t.equal(wrongHost.statusCode, 404, `${url.slice(0, 40)} on a host that is not served: the unknown-route 404`);
    t.equal(wrongHost.headers['content-type'], 'application/problem+json');
    t.equal((wrongHost.json() as { error: string }).error, 'HTTP-001');
    const served = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost' } });
    t.equal(served.statusCode, 400);
    t.notMatch(served.body, /%FF|%ED|bbbbbbbb|FST_ERR/, 'the path is not echoed');
    t.ok(served.headers['x-request-id'], 'a request id, as every answer');
  }
  // The v1 Go client still reads the error as application/json.
  const go = await kernel.app.inject({ method: 'GET', url: '/api/v1/cas/%FF', headers: { host: 'localhost', 'user-agent': 'Go-http-client/1.1' } });
  t.equal(go.headers['content-type'], 'application/json');
});

t.test('valid JSON answers carry Content-Type application/json exactly', async (t) => {
  const kernel = await setup(t);
  const ok = await kernel.app.inject({ method: 'POST', url: '/fixture/echo', headers: json, payload: { name: 'certwright' } });
  t.equal(ok.statusCode, 200);
  t.equal(ok.headers['content-type'], 'application/json');
  t.same(ok.json(), { hello: 'certwright' });
  for (const url of ['/healthz', '/api/v1/endpoints/', '/api/v1/licenses/modules', '/api/v1/openapi.json']) {
    const res = await kernel.app.inject({ method: 'GET', url, headers: { host: 'localhost', accept: 'application/json', ...ADMIN_HEADERS } });
    t.equal(res.statusCode, 200, url);
    t.equal(res.headers['content-type'], 'application/json', `${url}: no charset`);
  }
});

t.test('request ids: given ones are echoed, others generated, and the log carries them', async (t) => {
  const capture = new LogCapture();
  const kernel = await setup(t, capture);
  const given = await kernel.app.inject({ method: 'GET', url: '/fixture/boom', headers: { host: 'localhost', 'x-request-id': 'trace-abc.123' } });
  t.equal(given.headers['x-request-id'], 'trace-abc.123');
  const logged = capture.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === 'trace-abc.123');
  t.ok(logged, 'the 500 was logged under the request id');
  t.match(String((logged?.err as { message?: string })?.message), /hunter2/, 'the internal message goes to the log, not the client');
  const hostile = await kernel.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'localhost', 'x-request-id': 'bad id with spaces "and quotes"' } });
  t.match(hostile.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an unsafe id is replaced');
});

t.test('the error media type follows what the caller takes (v1 Go reads error bodies only as application/json)', async (t) => {
  const kernel = await setup(t);
  const bodyOf = (res: { body: string }) => JSON.parse(res.body) as Record<string, unknown>;
  const unknown = (headers: Record<string, string>) => kernel.app.inject({ method: 'GET', url: '/api/v1/certificates/ffffffffffffffffffffffff', headers: { host: 'localhost', ...ADMIN_HEADERS, ...headers } });
  const cases: [string, Record<string, string>, string][] = [
    ['no Accept (curl-like defaults, fastify inject)', {}, 'application/problem+json'],
    ['Accept */* (the MCP server, curl)', { accept: '*/*' }, 'application/problem+json'],
    ['Accept: application/json, application/problem+json (v2 Go docs)', { accept: 'application/json, application/problem+json' }, 'application/problem+json'],
    ['Accept: application/json only (v2 Go as it runs)', { accept: 'application/json' }, 'application/json'],
    ['Accept: application/json;q=0.9', { accept: 'application/json;q=0.9' }, 'application/json'],
    ["Go's default client, no Accept (v1 Go SDK)", { 'user-agent': 'Go-http-client/1.1' }, 'application/json'],
    ["Go's default client asking for problem+json", { 'user-agent': 'Go-http-client/1.1', accept: 'application/problem+json' }, 'application/problem+json'],
  ];
  let first: Record<string, unknown> | undefined;
  for (const [what, headers, type] of cases) {
    const res = await unknown(headers);
    t.equal(res.statusCode, 404, `${what}: 404`);
    t.equal(res.headers['content-type'], type, `${what}: ${type}`);
    first ??= bodyOf(res);
    t.same(bodyOf(res), first, `${what}: the same {error, message, title, status}`);
  }
  t.match(first, { error: 'CRT-003', status: 404, title: String, message: String });
  const unauthenticated = await kernel.app.inject({ method: 'GET', url: '/api/v1/licenses', headers: { host: 'localhost', 'user-agent': 'Go-http-client/1.1' } });
  t.equal(unauthenticated.statusCode, 401);
  t.equal(unauthenticated.headers['content-type'], 'application/json', 'authentication failures too');
});
