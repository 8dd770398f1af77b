/**
 * The Storages service (core/storage/storages.ts) on a kernel: storage objects of the registry as
 * backends, the system configuration's choice per purpose, changes through the API, plugins' types.
 * Runs on SQLite and, with TEST_DATABASE_URL, on MariaDB.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginInstance, StorageBackend } from '@certwright/sdk';
import t from 'tap';
import { ProblemError } from '../../../core/errors/index.js';
import { StorageKeyError, type Storages } from '../../../core/storage/index.js';
import { bootKernel } from '../../helpers/kernel.js';
import { ADMIN_HEADERS, caller } from '../../helpers/security.js';

const kernel = await bootKernel(t);
const admin = caller(kernel, ADMIN_HEADERS);
const storages = kernel.container.resolve<Storages>('storages');
const dataDir = kernel.config.dataDir;

async function text(stream: AsyncIterable<Uint8Array> | null): Promise<string | null> {
  if (!stream) return null;
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(Buffer.from(piece));
  return Buffer.concat(pieces).toString('utf8');
}

async function expectOk(res: { statusCode: number; body: string }, status: number): Promise<void> {
  if (res.statusCode !== status) throw new Error(`${res.statusCode} ${res.body}`);
}

t.test('the default storage, and the purposes falling back on it', async (t) => {
  const reports = await storages.forPurpose('default', 'reports');
  await reports.put('r/one.csv', Buffer.from('a,b\n'));
  t.equal(readFileSync(join(dataDir, 'storages', 'default', 'r', 'one.csv'), 'utf8'), 'a,b\n', 'reports go to <dataDir>/storages/default');
  const archives = await storages.forPurpose('default', 'archives');
  t.equal(await text(await archives.get('r/one.csv')), 'a,b\n', 'archives too, at first start');
  await t.rejects(storages.open('default', 'nope'), { code: 'STORAGE-003' }, 'an unknown storage is STORAGE-003');
  await t.rejects(storages.open('default', 'nope'), ProblemError);
});

t.test('the system configuration chooses the storage of each purpose', async (t) => {
  await expectOk(await admin('POST', '/api/v1/system/storages/', { name: 'db', type: 'database' }), 201);
  await expectOk(await admin('PUT', '/api/v1/system/configuration/', { type: 'storage', archiveStorage: 'db', magicLinkReportStorage: 'default' }), 200);

  const archives = await storages.forPurpose('default', 'archives');
  await archives.put('2024/archive.bin', Buffer.from('archived'));
  const rows = await kernel.db.knex('storage_blobs').where({ tenant: 'default', storage: 'db', blob_key: '2024/archive.bin' }).select('chunk');
  t.equal(rows.length, 1, 'archives now go to the database storage');
  t.notOk(existsSync(join(dataDir, 'storages', 'default', '2024')), 'not to the default one');
  t.equal(await text(await (await storages.forPurpose('default', 'reports')).get('2024/archive.bin')), null, 'reports still use default');

  // A storage the system configuration names cannot be deleted (the registry's referrer check).
  const refused = await admin('DELETE', '/api/v1/system/storages/db');
  t.equal(refused.statusCode, 400);
  t.match(refused.json(), { error: 'STORAGE-005' });
  t.same(refused.json().referrers, ['system-configuration/storage']);
  t.equal(await text(await archives.get('2024/archive.bin')), 'archived', 'and its content is still there');

  // Naming no storage falls back on default.
  await expectOk(await admin('PUT', '/api/v1/system/configuration/', { type: 'storage', archiveStorage: null, magicLinkReportStorage: null }), 200);
  t.equal(await text(await (await storages.forPurpose('default', 'archives')).get('r/one.csv')), 'a,b\n', 'null: default');
  await expectOk(await admin('DELETE', '/api/v1/system/storages/db'), 204);
});

t.test('a storage changed through the API applies to the next open', async (t) => {
  await expectOk(await admin('POST', '/api/v1/system/storages/', { name: 'files', type: 'filesystem', path: 'one' }), 201);
  await (await storages.open('default', 'files')).put('k', Buffer.from('in one'));
  t.ok(existsSync(join(dataDir, 'storages', 'one', 'k')), '<dataDir>/storages/one');

  await expectOk(await admin('PUT', '/api/v1/system/storages/', { name: 'files', type: 'filesystem', path: 'two/sub' }), 200);
  const moved = await storages.open('default', 'files');
  t.equal(await moved.get('k'), null, 'the new path is read');
  await moved.put('k', Buffer.from('in two'));
  t.equal(readFileSync(join(dataDir, 'storages', 'two', 'sub', 'k'), 'utf8'), 'in two', 'and written');

  await expectOk(await admin('PUT', '/api/v1/system/storages/', { name: 'files', type: 'database' }), 200);
  await (await storages.open('default', 'files')).put('k', Buffer.from('in the database'));
  t.equal(await text(await (await storages.open('default', 'files')).get('k')), 'in the database', 'a type change too');
  t.equal(readFileSync(join(dataDir, 'storages', 'two', 'sub', 'k'), 'utf8'), 'in two', 'the old files stay where they were');

  const escape = await admin('PUT', '/api/v1/system/storages/', { name: 'files', type: 'filesystem', path: '../outside' });
  t.equal(escape.statusCode, 400, 'a path out of <dataDir>/storages is refused');
  t.match(escape.json(), { error: 'STORAGE-002' });
});

t.test('a plugin storage type: its factory, the key rule in front of it', async (t) => {
  const made: PluginInstance[] = [];
  const calls: string[] = [];
  const memory = new Map<string, Buffer>();
  kernel.provided.storages.add('test-plugin', 'memory', (instance) => {
    made.push(instance);
    const backend: StorageBackend = {
      async put(key, data) {
        calls.push(`put ${key}`);
        const pieces: Buffer[] = [];
        if (Buffer.isBuffer(data)) pieces.push(data);
        else for await (const p of data) pieces.push(Buffer.from(p));
        memory.set(key, Buffer.concat(pieces));
      },
      async get(key) {
        calls.push(`get ${key}`);
        const value = memory.get(key);
        return value ? (async function* () { yield value; })() : null;
      },
      async remove(key) {
        calls.push(`remove ${key}`);
        memory.delete(key);
      },
    };
    return backend;
  });
  await expectOk(await admin('POST', '/api/v1/security/credentials/', { name: 's3-key', type: 'password', login: 'AKIA', password: { value: 'the-secret' } }), 201);
  await expectOk(await admin('POST', '/api/v1/system/storages/', { name: 'mem', type: 'memory', bucket: 'b1', credentials: 's3-key' }), 201);

  const backend = await storages.open('default', 'mem');
  await backend.put('x/y', Buffer.from('plugged'));
  t.equal(await text(await backend.get('x/y')), 'plugged');
  t.equal(made.length, 1);
  t.match(made[0], { name: 'mem', config: { name: 'mem', type: 'memory', bucket: 'b1', credentials: 's3-key', tenant: 'default', references: { credentials: { name: 's3-key', login: 'AKIA', password: { value: 'the-secret' } } } } }, 'the object, its tenant and its credential opened');

  await storages.open('default', 'mem');
  t.equal(made.length, 1, 'an unchanged object keeps its instance');
  await expectOk(await admin('PUT', '/api/v1/system/storages/', { name: 'mem', type: 'memory', bucket: 'b2', credentials: 's3-key' }), 200);
  await storages.open('default', 'mem');
  t.equal(made.length, 2, 'a changed object gets a new one');
  t.match(made[1], { config: { bucket: 'b2' } });

  const before = calls.length;
  for (const key of ['../x', '/etc/passwd', '', 'k'.repeat(500)]) {
    await t.rejects(backend.put(key, Buffer.from('x')), StorageKeyError);
    await t.rejects(backend.get(key), StorageKeyError);
    await t.rejects(backend.remove(key), StorageKeyError);
  }
  t.equal(calls.length, before, 'hostile keys never reach the plugin');

  // The plugin gone (disabled at the next start): its storages answer why.
  kernel.provided.storages.removePlugin('test-plugin');
  await t.rejects(storages.open('default', 'mem'), { code: 'STORAGE-002', message: /no loaded plugin provides the storage type "memory"/ });
});
