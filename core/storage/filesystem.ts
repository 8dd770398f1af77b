import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { StorageBackend } from '@certwright/sdk';
import { piecesOf, type StorageData } from './chunks.js';
import { checkStorageKey } from './keys.js';

/** Storage files may hold reports of the whole inventory: private to the service's user, as the database is (db/file-modes.ts). */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Where filesystem storages live: `<dataDir>/storages/<path or name>`. */
export function filesystemRoot(dataDir: string, storage: { name: string; path?: string | undefined }): string {
  const base = resolve(dataDir, 'storages');
  const root = resolve(base, storage.path ?? storage.name);
  // The registry refuses `..` in `path` already; checked again here because this is where it would matter.
  const below = relative(base, root);
  if (below === '' || below === '..' || below.startsWith(`..${sep}`) || isAbsolute(below)) throw new Error(`the storage "${storage.name}" points outside ${base}`);
  return root;
}

const isMissing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/**
 * The `filesystem` storage type: one file per key below its root. A write goes to a temporary file beside
 * the target, synced, then renamed over it: a reader sees the old content or the new, never half of it.
 */
export class FilesystemStorage implements StorageBackend {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    checkStorageKey(key);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, data: StorageData): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(dirname(target), { recursive: true, mode: DIR_MODE });
    // The suffix has a character keys cannot have (`~`): no key ever names a temporary file.
    const temp = `${target}.${randomBytes(6).toString('hex')}~tmp`;
    const file = await open(temp, 'wx', FILE_MODE);
    try {
      try {
        for await (const piece of piecesOf(data)) await file.write(piece);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  async get(key: string): Promise<AsyncIterable<Uint8Array> | null> {
    const path = this.pathOf(key);
    let file;
    try {
      file = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    // A key that names a folder (`a` when `a/b` exists) holds no content.
    if (!(await file.stat()).isFile()) {
      await file.close();
      return null;
    }
    // Opened now, so a missing key answers null here and a rename afterwards does not change what is read.
    // The stream closes the file at its end or on destroy(): callers read it through or destroy it.
    return file.createReadStream();
  }

  async remove(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    // Folders left empty go too (dated keys would otherwise leave a trail of them); the root stays.
    for (let dir = dirname(path); dir !== this.root && dir.startsWith(this.root + sep); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
    }
  }
}
