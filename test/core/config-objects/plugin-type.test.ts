/**
 * A plugin declares its own configuration type through `registries.configTypes` (sdk/src/config-objects.ts):
 * the kernel serves its standard set with the same problems, secrets, references and events as the core's
 * types, and refuses a declaration that clashes with one already made.
 */
import t from 'tap';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { caller } from '../../helpers/security.js';
import { writePlugin } from '../../helpers/plugins.js';

const plugins = tempDir(t);
writePlugin(
  plugins,
  'vault-fixture',
  { id: 'vault-fixture', kind: 'third-party-connector' },
  `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.configTypes.declare({
      type: 'vault-mount',
      title: 'Vault mounts',
      noun: 'Vault mount',
      exportKey: 'vaultMounts',
      basePath: '/api/v1/thirdparty/vault/mounts/',
      tag: 'third-party',
      section: 'third-party',
      errorFamily: 'VAULT-MOUNT',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 64 },
        path: { type: 'string', pattern: '^[a-z/]+$' },
        token: { type: 'string' },
        proxy: { type: 'string' },
      },
      required: ['name', 'path', 'token'],
      secrets: ['token'],
      references: [{ field: 'proxy', type: 'http-proxy' }],
      hooks: { validate: (o) => (o.path === '/' ? 'path: the root cannot be a mount' : undefined) },
    });
  },
});
`,
);

// A plugin declaring a type the core already declares: refused, the plugin degraded, the kernel up.
writePlugin(
  plugins,
  'clash-fixture',
  { id: 'clash-fixture', kind: 'third-party-connector' },
  `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.configTypes.declare({ type: 'credential', title: 'x', noun: 'x', exportKey: 'x', basePath: '/api/v1/x/', tag: 'x', section: 'third-party', errorFamily: 'X', properties: { name: { type: 'string' } } });
  },
});
`,
);

const kernel = await bootKernel(t, { plugins: { paths: [plugins] } });
const admin = caller(kernel, ADMIN_HEADERS);
const BASE = '/api/v1/thirdparty/vault/mounts/';

t.test("a plugin's type gets the standard set", async (t) => {
  const created = await admin('POST', BASE, { name: 'pki', path: 'pki/issue', token: 'hvs.PLUGIN-SECRET-TOKEN' });
  t.equal(created.statusCode, 201);
  t.equal(created.json().token, '********', 'its secret is masked');
  t.notMatch(created.body, 'PLUGIN-SECRET');
  t.equal((await kernel.configObjects.resolve('vault-mount', 'default', 'pki'))?.token, 'hvs.PLUGIN-SECRET-TOKEN', 'and sealed at rest, open to the platform');
  const stored = await kernel.db.knex('config_objects').where({ type: 'vault-mount', name: 'pki' }).first();
  t.notMatch(stored.body, 'PLUGIN-SECRET', 'the row holds the sealed value');

  const bad = await admin('POST', BASE, { name: 'root', path: '/', token: 'x' });
  t.match(bad.json(), { error: 'VAULT-MOUNT-002', message: /path: the root/ }, "its own hook's message, under its family");
  const noProxy = await admin('POST', BASE, { name: 'p2', path: 'a', token: 'x', proxy: 'nope' });
  t.match(noProxy.json(), { error: 'VAULT-MOUNT-002', message: /proxy: no HTTP proxy is named "nope"/ }, 'references to core types are checked');
  t.equal((await admin('GET', `${BASE}nope`)).json().error, 'VAULT-MOUNT-003');
  t.equal((await admin('POST', BASE, { name: 'pki', path: 'x', token: 'y' })).json().error, 'VAULT-MOUNT-004');

  // A core proxy it references cannot be deleted while it does.
  t.equal((await admin('POST', '/api/v1/proxy/httpproxies/', { name: 'egress', host: 'proxy.example', port: 3128 })).statusCode, 201);
  t.equal((await admin('PUT', BASE, { name: 'pki', path: 'pki/issue', proxy: 'egress' })).statusCode, 200, 'PUT without the secret keeps it');
  t.equal((await kernel.configObjects.resolve('vault-mount', 'default', 'pki'))?.token, 'hvs.PLUGIN-SECRET-TOKEN');
  const refused = await admin('DELETE', '/api/v1/proxy/httpproxies/egress');
  t.match(refused.json(), { error: 'HTTP-PROXY-005', referrers: ['vault-mount/pki'] });

  const event = await kernel.db.knex('events').where({ code: 'CONFIG-UPDATED', object_type: 'vault-mount' }).first();
  t.same(JSON.parse(event.payload).changed, ['proxy'], 'the event names the changed field, not the kept secret');
  t.equal((await admin('DELETE', `${BASE}pki`)).statusCode, 204);
});

t.test('a clashing declaration degrades its plugin only', async (t) => {
  const clash = kernel.plugins.summaries().find((p) => p.id === 'clash-fixture');
  t.equal(clash?.state, 'degraded');
  t.match(clash?.reason, /configuration type refused: configuration type "credential" is already declared by core/);
  t.equal((await admin('GET', '/api/v1/security/credentials/')).statusCode, 200, "the core's credentials are served as before");
  t.equal((await admin('GET', '/api/v1/x/')).statusCode, 404, 'the clashing routes are not');
});

t.test('its routes are in the API reference and its permission applies', async (t) => {
  const doc = (await kernel.app.inject({ url: '/api/v1/openapi.json', headers: { host: 'localhost', ...ADMIN_HEADERS } })).json();
  t.ok(doc.paths?.['/api/v1/thirdparty/vault/mounts/'], 'listed in the OpenAPI document');
  t.ok(kernel.app.routeTable.some((r) => r.url === BASE && r.method === 'POST' && typeof r.access === 'object' && r.access.permission === 'configuration:third-party:write'));
});
