// Master key loading: from env/config, or from <dataDir>/master.key, creating
// the file on first start. Error messages never echo key material.

import { createHash, randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeBase64Any } from './base64.js';

export const MASTER_KEY_BYTES = 32;
export const MASTER_KEY_FILE = 'master.key';

export class MasterKeyError extends Error {
  override readonly name = 'MasterKeyError';
}

export interface LoadedMasterKey {
  key: Buffer;
  source: 'config' | 'file' | 'created';
}

/** Identifies a key in logs and sealed values without revealing it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export async function loadMasterKey(opts: {
  fromEnvOrConfig?: string | null;
  dataDir: string;
}): Promise<LoadedMasterKey> {
  const configured = opts.fromEnvOrConfig;
  if (typeof configured === 'string' && configured.length > 0) {
    return { key: parseConfiguredKey(configured), source: 'config' };
  }
  const path = join(opts.dataDir, MASTER_KEY_FILE);
  const existing = await readKeyFile(path);
  if (existing) return { key: existing, source: 'file' };
  return createKeyFile(opts.dataDir, path);
}

function parseConfiguredKey(raw: string): Buffer {
  // Trim: values pasted into env files often carry a trailing newline.
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const decoded = decodeBase64Any(text);
  if (decoded && decoded.length === MASTER_KEY_BYTES) return decoded;
  // Only lengths are reported: anything more could leak part of a real key.
  const detail = decoded
    ? `it decodes to ${decoded.length} bytes`
    : `it is neither hex nor base64 (${text.length} characters)`;
  throw new MasterKeyError(
    `configured master key is invalid: expected 64 hex characters or base64/base64url of ${MASTER_KEY_BYTES} bytes, but ${detail}`,
  );
}

/** Returns the key stored at `path`, or null if the file does not exist. */
async function readKeyFile(path: string): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(path, fsc.O_RDONLY);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  try {
    // fstat on the open handle: checks the same file we then read.
    const st = await handle.stat();
    if (!st.isFile()) throw new MasterKeyError(`master key file ${path} is not a regular file`);
    // POSIX permission bits are meaningless on Windows.
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      throw new MasterKeyError(
        `master key file ${path} is readable by group/others (mode ${mode}); run: chmod 600 ${path}`,
      );
    }
    const text = (await handle.readFile('utf8')).trim();
    const key = decodeBase64Any(text);
    if (!key || key.length !== MASTER_KEY_BYTES) {
      throw new MasterKeyError(
        `master key file ${path} is corrupt or truncated: expected base64 of ${MASTER_KEY_BYTES} bytes` +
          (key ? `, found ${key.length}` : ''),
      );
    }
    return key;
  } finally {
    await handle.close();
  }
}

async function createKeyFile(dataDir: string, path: string): Promise<LoadedMasterKey> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(MASTER_KEY_BYTES);
  // Write a complete, fsynced temp file ('wx': never reuse someone else's),
  // then link() it into place: link fails with EEXIST if another process won
  // the race, and readers can never observe a half-written master.key.
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.chmod(0o600); // exact mode regardless of umask
      await handle.writeFile(`${key.toString('base64')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(tmp, path);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
      const theirs = await readKeyFile(path);
      if (theirs) return { key: theirs, source: 'file' };
      throw new MasterKeyError(`master key file ${path} vanished while being created`);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await syncDir(dataDir);
  return { key, source: 'created' };
}

/** Persist the new directory entry: losing the key would lose every secret. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, fsc.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not supported everywhere (e.g. Windows); the file itself is fsynced.
  }
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === code;
}
