import { readFileSync } from 'node:fs';
import t from 'tap';
import { definePlugin, isDefinedPlugin, manifestSchema, PendingError, PermanentError, SDK_VERSION, TransientError } from '@certwright/sdk';
import { checkManifest } from '../../core/plugins/manifest.js';

t.test('SDK_VERSION is the published package version', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../sdk/package.json', import.meta.url), 'utf8')) as { version: string };
  t.equal(SDK_VERSION, pkg.version);
});

t.test('definePlugin', async (t) => {
  const plugin = definePlugin({ register() {} });
  t.ok(isDefinedPlugin(plugin));
  t.notOk(isDefinedPlugin({ register() {} }), 'a look-alike object is not a plugin');
  t.throws(() => definePlugin({} as never), /register/);
  t.ok(Object.isFrozen(plugin));
});

t.test('typed errors carry what the kernel needs', async (t) => {
  const pending = new PendingError('queued at the CA', 120, 'token-1');
  t.equal(pending.retryAfterSeconds, 120);
  t.equal(pending.pollToken, 'token-1');
  t.equal(pending.name, 'PendingError');
  t.equal(new TransientError('503', 5).retryAfterSeconds, 5);
  t.type(new PermanentError('bad CSR'), Error);
});

t.test('manifest schema', async (t) => {
  t.equal(manifestSchema.$id, 'https://certwright.dev/schemas/plugin-manifest.json');
  const base = { id: 'protocol-est', name: 'EST', version: '1.2.3', kind: 'protocol', capability: 'est', sdk: '^1.0.0', entry: 'index.ts' };
  t.ok(checkManifest(base).ok, 'a complete protocol manifest');
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['protocol without capability', { ...base, capability: undefined }, /capability: is required/],
    ['capability on a non-protocol', { ...base, kind: 'pki-connector' }, /capability: is only allowed on protocol plugins/],
    ['unknown capability', { ...base, capability: 'ftp' }, /capability: must be one of/],
    ['unknown field', { ...base, colour: 'blue' }, /colour: is not a manifest field/],
    ['bad sdk range', { ...base, sdk: 'latest-ish' }, /sdk: "latest-ish" is not a semver range/],
    ['entry escaping the folder', { ...base, entry: '../../core/kernel.ts' }, /entry: must match pattern/],
    ['upper-case id', { ...base, id: 'Protocol-EST' }, /id: must match pattern/],
  ];
  for (const [name, manifest, error] of cases) {
    const check = checkManifest(JSON.parse(JSON.stringify(manifest)));
    t.notOk(check.ok, name);
    if (!check.ok) t.match(check.errors.join('; '), error, name);
  }
  t.ok(checkManifest({ ...base, id: '@vendor/protocol-est' }).ok, 'scoped ids');
});
