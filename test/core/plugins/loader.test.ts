import t from 'tap';
import { ADMIN_HEADERS, bootKernel, tempDir } from '../../helpers/kernel.js';
import { writePlugin } from '../../helpers/plugins.js';

const CHANNEL = (type: string) => `import { definePlugin } from '__SDK__';
export default definePlugin({
  register(ctx) {
    ctx.registries.triggerChannels.register('${type}', {
      validateTarget: (x) => typeof x === 'object' && x !== null,
      send: async () => ({ delivered: true, retryable: false }),
    });
  },
});
`;

t.test('a broken plugin is degraded with its reason and the boot goes on', async (t) => {
  const dir = tempDir(t);
  writePlugin(dir, 'good', { id: 'good', kind: 'trigger-channel' }, CHANNEL('good'));
  writePlugin(dir, 'bad-manifest', { id: 'bad-manifest', kind: 'teleporter' }, CHANNEL('x'));
  writePlugin(dir, 'future-sdk', { id: 'future-sdk', kind: 'trigger-channel', sdk: '^2.0.0' }, CHANNEL('future'));
  writePlugin(dir, 'throws', { id: 'throws', kind: 'trigger-channel' }, `import { definePlugin } from '__SDK__';
export default definePlugin({ register(ctx) { ctx.registries.triggerChannels.register('half', { validateTarget: () => true, send: async () => ({ delivered: true, retryable: false }) }); throw new Error('cannot reach the vendor'); } });`);
  writePlugin(dir, 'not-defined', { id: 'not-defined', kind: 'trigger-channel' }, 'export default { register() {} };');
  writePlugin(dir, 'syntax', { id: 'syntax', kind: 'trigger-channel' }, 'export default definePlugin({ register( ;');
  writePlugin(dir, 'twin', { id: 'good', kind: 'trigger-channel' }, CHANNEL('twin'));
  writePlugin(dir, 'off', { id: 'off', kind: 'trigger-channel' }, CHANNEL('off'));
  writePlugin(dir, 'needs-url', { id: 'needs-url', kind: 'trigger-channel', configSchema: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, key: { type: 'string', 'x-secret': true } } } }, CHANNEL('url'));
  writePlugin(dir, 'bad-uri', { id: 'bad-uri', kind: 'trigger-channel', configSchema: { type: 'object', properties: { url: { type: 'string', format: 'uri' } } } }, CHANNEL('bad-uri'));
  writePlugin(dir, 'good-uri', { id: 'good-uri', kind: 'trigger-channel', configSchema: { type: 'object', properties: { url: { type: 'string', format: 'uri' } } } }, CHANNEL('good-uri'));
  writePlugin(dir, 'single', { id: 'single', kind: 'trigger-channel' }, CHANNEL('single'));
  writePlugin(dir, 'fails-start', { id: 'fails-start', kind: 'trigger-channel' }, `import { definePlugin } from '__SDK__';
export default definePlugin({ register() {}, start() { throw new Error('port busy'); } });`);

  const kernel = await bootKernel(t, {
    plugins: {
      paths: [dir],
      disabled: ['off'],
      instances: {
        'needs-url': [{ name: 'main', config: { key: 'k' } }],
        'bad-uri': [{ name: 'main', config: { url: 'not a url' } }],
        'good-uri': [{ name: 'main', config: { url: 'https://vendor.example/api' } }],
        single: [{ name: 'a', config: {} }, { name: 'b', config: {} }],
      },
    },
  });
  const byDir = (folder: string) => kernel.plugins.records.find((r) => r.dir.endsWith(`/${folder}`))!;
  t.equal(byDir('good').state, 'active');
  t.match(byDir('bad-manifest'), { state: 'degraded', reason: /kind: must be one of/ });
  t.match(byDir('future-sdk'), { state: 'degraded', reason: /built for SDK \^2\.0\.0, but this Certwright provides SDK 1\./ });
  t.match(byDir('throws'), { state: 'degraded', reason: /cannot reach the vendor/ });
  t.equal(kernel.provided.triggerChannels.get('half'), undefined, 'what a failed plugin registered is withdrawn');
  t.match(byDir('not-defined'), { state: 'degraded', reason: /definePlugin/ });
  t.match(byDir('syntax'), { state: 'degraded' });
  t.match(byDir('twin'), { state: 'degraded', reason: /duplicate id/ });
  t.match(byDir('off'), { state: 'disabled' });
  t.match(byDir('needs-url'), { state: 'degraded', reason: /instance "main": config must have required property 'url'/ });
  t.notMatch(byDir('needs-url').reason, /"k"/);
  t.match(byDir('bad-uri'), { state: 'degraded', reason: /instance "main": url must match format "uri"/ }, 'a format of the schema is checked');
  t.equal(byDir('good-uri').state, 'active');
  t.match(byDir('single'), { state: 'degraded', reason: /not multiInstance/ });
  t.match(byDir('fails-start'), { state: 'degraded', reason: /start failed: port busy/ });
  t.equal(kernel.plugins.records.find((r) => r.id === 'trigger-log')?.state, 'active', 'built-ins unaffected');

  const res = await kernel.app.inject({ url: '/api/v1/licenses/modules', headers: { host: 'localhost', ...ADMIN_HEADERS } });
  const listed = res.json() as { id: string; state: string; reason?: string }[];
  t.match(listed.find((m) => m.id === 'future-sdk'), { state: 'degraded', reason: /SDK/ }, 'the API shows degraded plugins and why');
});

t.test('the plugin context: migrations, key-value store, secrets, events, egress', async (t) => {
  const dir = tempDir(t);
  writePlugin(
    dir,
    'kitchen-sink',
    { id: '@vendor/kitchen-sink', kind: 'third-party-connector', migrations: 'migrations', egress: ['*.vendor.example'] },
    `import { definePlugin } from '__SDK__';
export const seen: Record<string, unknown> = {};
export default definePlugin({
  async register(ctx) {
    await ctx.kv.set('cursor', { page: 3 });
    seen.kv = await ctx.kv.get('cursor');
    await ctx.kv.set('cursor', { page: 4 });
    seen.kvUpdated = await ctx.kv.get('cursor');
    await ctx.kv.delete('cursor');
    seen.kvDeleted = await ctx.kv.get('cursor');
    const sealed = ctx.secrets.seal('vendor-api-token', 'token');
    seen.sealed = sealed;
    seen.opened = ctx.secrets.open(sealed, 'token');
    try { ctx.secrets.open(sealed, 'other'); seen.wrongAad = 'opened'; } catch (err) { seen.wrongAad = err.constructor.name; }
    seen.event = await ctx.events.append({ code: 'SYNC-DONE', module: '', status: 'success', payload: { items: 2 } });
    try { await ctx.http.fetch('http://127.0.0.1:1/steal'); seen.egress = 'allowed'; } catch (err) { seen.egress = err.name + ': ' + err.message; }
    seen.rows = await (globalThis as any).__probe?.();
    ctx.registries.thirdPartyConnectors.register('sink', () => ({ testConnection: async () => ({ ok: true }) }));
  },
});
`,
    {
      'migrations/001_items.ts': `export async function up(knex) { await knex.schema.createTable('sink_items', (t) => { t.string('id', 24).primary(); t.string('tenant', 64).notNullable(); }); }
export async function down(knex) { await knex.schema.dropTable('sink_items'); }`,
    },
  );
  const kernel = await bootKernel(t, { plugins: { paths: [dir] } });
  const record = kernel.plugins.records.find((r) => r.id === '@vendor/kitchen-sink')!;
  t.equal(record.state, 'active', record.reason ?? '');
  const mod = (await import(`${record.dir}/index.ts`)) as { seen: Record<string, unknown> };
  const seen = mod.seen;
  t.ok(await kernel.db.knex.schema.hasTable('sink_items'), "the plugin's migration created its table");
  t.same(seen.kv, { page: 3 });
  t.same(seen.kvUpdated, { page: 4 });
  t.equal(seen.kvDeleted, undefined);
  t.equal(seen.opened, 'vendor-api-token');
  t.notMatch(String(seen.sealed), /vendor-api-token/, 'sealed text does not contain the secret');
  t.equal(seen.wrongAad, 'SecretDecryptError', 'a secret sealed for one purpose does not open for another');
  t.throws(() => kernel.secrets.openString(String(seen.sealed), 'token'), 'nor outside the plugin that sealed it');
  const event = await kernel.events.get('default', (seen.event as { id: string }).id);
  t.match(event, { code: 'SYNC-DONE', module: '@vendor/kitchen-sink', tenant: 'default', status: 'success' });
  t.match(String(seen.egress), /EgressDeniedError: .*127\.0\.0\.1.*egress/, 'egress outside the manifest is refused');
  t.ok(kernel.provided.thirdPartyConnectors.get('sink'));

  // Booting again on the same database does not re-run the plugin's migration.
  const again = await bootKernel(t, {}, { config: { ...kernel.config, dataDir: kernel.config.dataDir } });
  t.equal(again.plugins.records.find((r) => r.id === '@vendor/kitchen-sink')?.state, 'active');
});

t.test('egress patterns', async (t) => {
  const { hostAllowed } = await import('../../../core/plugins/egress.js');
  t.ok(hostAllowed('api.vendor.example', ['*.vendor.example']));
  t.notOk(hostAllowed('vendor.example', ['*.vendor.example']), 'a wildcard does not cover the apex');
  t.notOk(hostAllowed('evilvendor.example', ['*.vendor.example']));
  t.ok(hostAllowed('API.Vendor.Example', ['api.vendor.example']));
  t.notOk(hostAllowed('api.vendor.example.evil', ['api.vendor.example']));
});
