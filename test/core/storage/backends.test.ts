/**
 * The built-in storage backends (core/storage): filesystem and database, on SQLite and, with
 * TEST_DATABASE_URL, on MariaDB. Round trips of buffers and streams, hostile keys, file modes, chunks.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StorageBackend } from '@certwright/sdk';
import t from 'tap';
import { CHUNK_BYTES, DatabaseStorage, FilesystemStorage, filesystemRoot, MAX_KEY_LENGTH, StorageKeyError } from '../../../core/storage/index.js';
import { bootKernel, tempDir } from '../../helpers/kernel.js';

const kernel = await bootKernel(t);
const knex = kernel.db.knex;

async function read(stream: AsyncIterable<Uint8Array> | null): Promise<Buffer | null> {
  if (!stream) return null;
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(Buffer.from(piece));
  return Buffer.concat(pieces);
}

/** Pieces of uneven sizes, so chunk and write boundaries fall anywhere. */
async function* unevenly(data: Buffer): AsyncGenerator<Uint8Array> {
  const sizes = [1, 7, 65_536, 300_001, 13];
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = sizes[i % sizes.length]!;
    yield new Uint8Array(data.subarray(at, at + size));
    at += size;
  }
}

async function* failingAfter(data: Buffer): AsyncGenerator<Uint8Array> {
  yield data;
  throw new Error('the producer failed');
}

const HOSTILE = ['../x', '/etc/passwd', '', 'a'.repeat(MAX_KEY_LENGTH + 1), 'a/../../x', './a', 'a/./b', 'a//b', 'a/', 'a\\b', '..', 'C:\\x', 'a b', 'x\u0000y', '~tmp'];

const dataRoot = tempDir(t);
const backends: Record<string, () => StorageBackend> = {
  filesystem: () => new FilesystemStorage(filesystemRoot(dataRoot, { name: 'fs-test' })),
  database: () => new DatabaseStorage(knex, 'default', 'db-test'),
};

for (const [type, make] of Object.entries(backends)) {
  t.test(`${type}: round trips`, async (t) => {
    const storage = make();
    const big = randomBytes(CHUNK_BYTES * 4 + 12_345); // 1 MiB and more, not a whole number of chunks
    await storage.put('reports/2024/big.bin', big);
    t.ok((await read(await storage.get('reports/2024/big.bin')))!.equals(big), 'a 1 MiB+ buffer');

    const streamed = randomBytes(CHUNK_BYTES * 5 + 3);
    await storage.put('streamed.bin', unevenly(streamed));
    t.ok((await read(await storage.get('streamed.bin')))!.equals(streamed), 'a stream of uneven pieces');

    await storage.put('exact.bin', big.subarray(0, CHUNK_BYTES * 2));
    t.ok((await read(await storage.get('exact.bin')))!.equals(big.subarray(0, CHUNK_BYTES * 2)), 'a whole number of chunks');

    await storage.put('empty', Buffer.alloc(0));
    const empty = await storage.get('empty');
    t.not(empty, null, 'an empty value exists');
    t.equal((await read(empty))!.length, 0);

    await storage.put('reports/2024/big.bin', Buffer.from('replaced'));
    t.equal((await read(await storage.get('reports/2024/big.bin')))!.toString(), 'replaced', 'put replaces');

    t.equal(await storage.get('missing'), null, 'a missing key is null');
    t.equal(await storage.get('reports'), null, 'a key that is only a prefix of others is null');

    await storage.remove('streamed.bin');
    t.equal(await storage.get('streamed.bin'), null, 'removed');
    await storage.remove('streamed.bin'); // twice: no error
    t.equal((await read(await storage.get('exact.bin')))!.length, CHUNK_BYTES * 2, 'other keys untouched');
  });

  t.test(`${type}: a failed write keeps the previous content`, async (t) => {
    const storage = make();
    await storage.put('kept', Buffer.from('before'));
    await t.rejects(storage.put('kept', failingAfter(randomBytes(CHUNK_BYTES + 1))), /the producer failed/);
    t.equal((await read(await storage.get('kept')))!.toString(), 'before');
  });

  t.test(`${type}: hostile keys are refused`, async (t) => {
    const storage = make();
    for (const key of HOSTILE) {
      await t.rejects(storage.put(key, Buffer.from('x')), StorageKeyError, `put ${JSON.stringify(key.slice(0, 20))}`);
      await t.rejects(storage.get(key), StorageKeyError, `get ${JSON.stringify(key.slice(0, 20))}`);
      await t.rejects(storage.remove(key), StorageKeyError, `remove ${JSON.stringify(key.slice(0, 20))}`);
    }
    t.notOk(existsSync(join(dataRoot, 'storages', 'x')), 'nothing written beside the storage');
    t.notOk(existsSync(join(dataRoot, 'x')), 'nothing written above it');
    await storage.put('a'.repeat(MAX_KEY_LENGTH), Buffer.from('longest'));
    t.equal((await read(await storage.get('a'.repeat(MAX_KEY_LENGTH))))!.toString(), 'longest', `a ${MAX_KEY_LENGTH}-character key is fine`);
    await storage.put('.hidden-ok_1/v1.2-x', Buffer.from('dots'));
    t.equal((await read(await storage.get('.hidden-ok_1/v1.2-x')))!.toString(), 'dots', 'dots, dashes and underscores inside segments');
  });
}

t.test('filesystem: private modes, atomic writes, tidy removes', { skip: process.platform === 'win32' }, async (t) => {
  const root = tempDir(t);
  const storage = new FilesystemStorage(filesystemRoot(root, { name: 'named', path: 'reports/2024' }));
  t.equal(storage.root, join(root, 'storages', 'reports', '2024'), '<dataDir>/storages/<path>');
  await storage.put('a/b/file.csv', Buffer.from('1,2\n'));
  const mode = (path: string): number => statSync(path).mode & 0o777;
  t.equal(mode(join(storage.root, 'a', 'b', 'file.csv')), 0o600, 'files 0600');
  for (const dir of [join(root, 'storages'), join(root, 'storages', 'reports'), storage.root, join(storage.root, 'a'), join(storage.root, 'a', 'b')]) {
    t.equal(mode(dir), 0o700, `${dir.slice(root.length)} 0700`);
  }
  await storage.put('a/b/file.csv', Buffer.from('3,4\n'));
  t.equal(mode(join(storage.root, 'a', 'b', 'file.csv')), 0o600, 'a replaced file is 0600 too');
  await t.rejects(storage.put('a/b/file.csv', failingAfter(Buffer.from('partial'))));
  t.same(readdirSync(join(storage.root, 'a', 'b')), ['file.csv'], 'no temporary file left behind');

  await storage.remove('a/b/file.csv');
  t.notOk(existsSync(join(storage.root, 'a')), 'folders left empty are removed');
  t.ok(existsSync(storage.root), 'the root stays');

  t.equal(filesystemRoot(root, { name: 'plain' }), join(root, 'storages', 'plain'), 'the name when there is no path');
  t.throws(() => filesystemRoot(root, { name: 'x', path: '../../etc' }), /outside/);
  t.throws(() => filesystemRoot(root, { name: 'x', path: '.' }), /outside/);
  t.equal(filesystemRoot(root, { name: 'x', path: '..dots/x' }), join(root, 'storages', '..dots', 'x'), 'a folder named ..dots is below');
});

t.test('database: chunks in order, 256 KiB each', async (t) => {
  const storage = new DatabaseStorage(knex, 'default', 'chunks');
  const data = randomBytes(CHUNK_BYTES * 4 + 100);
  await storage.put('k', unevenly(data));
  const rows = (await knex('storage_blobs').where({ tenant: 'default', storage: 'chunks', blob_key: 'k' }).orderBy('chunk').select('chunk', 'data')) as { chunk: number; data: Buffer }[];
  t.same(rows.map((r) => Number(r.chunk)), [0, 1, 2, 3, 4], 'chunks 0…n-1');
  t.same(rows.map((r) => r.data.length), [CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, 100], '256 KiB each, the last one shorter');
  t.ok(Buffer.concat(rows.map((r) => r.data)).equals(data));

  const pieces: number[] = [];
  for await (const piece of (await storage.get('k'))!) pieces.push(piece.length);
  t.same(pieces, [CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, 100], 'get streams chunk by chunk');

  // Rows written in another order (or by another engine's insert order) still read in chunk order.
  const parts = [Buffer.from('two'), Buffer.from('zero'), Buffer.from('one')];
  await knex('storage_blobs').insert([2, 0, 1].map((chunk, i) => ({ tenant: 'default', storage: 'chunks', blob_key: 'shuffled', chunk, data: parts[i] })));
  t.equal((await read(await storage.get('shuffled')))!.toString(), 'zeroonetwo');

  await storage.put('k', Buffer.from('short'));
  t.equal(await knex('storage_blobs').where({ storage: 'chunks', blob_key: 'k' }).count({ n: '*' }).first().then((r) => Number(r!.n)), 1, 'a replace leaves no old chunk');
  await t.rejects(storage.put('k', failingAfter(randomBytes(CHUNK_BYTES * 2))));
  t.equal(await knex('storage_blobs').where({ storage: 'chunks' }).where('blob_key', 'like', '~%').count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'a failed write leaves no staged rows');

  // A write abandoned by a node that stopped a day ago is swept by the next write.
  await knex('storage_blobs').insert({ tenant: 'default', storage: 'chunks', blob_key: `~staging/${String(Date.now() - 2 * 86_400_000).padStart(15, '0')}-dead`, chunk: 0, data: Buffer.from('x') });
  await storage.put('other', Buffer.from('y'));
  t.equal(await knex('storage_blobs').where({ storage: 'chunks' }).where('blob_key', 'like', '~%').count({ n: '*' }).first().then((r) => Number(r!.n)), 0, 'abandoned staged rows swept');

  const elsewhere = new DatabaseStorage(knex, 'default', 'another');
  t.equal(await elsewhere.get('k'), null, 'storages do not see each other\'s keys');
  const otherTenant = new DatabaseStorage(knex, 'tenant-b', 'chunks');
  t.equal(await otherTenant.get('k'), null, 'nor tenants');
  await elsewhere.remove('k');
  t.equal((await read(await storage.get('k')))!.toString(), 'short', 'a remove elsewhere does not touch it');
});
