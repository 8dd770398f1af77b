import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The SQLite database holds password hashes and sealed secrets: its directory is created 0700 and the file
 * 0600 before SQLite opens it, so the WAL and shared-memory files, which SQLite creates with the database
 * file's mode, are 0600 too. An existing directory or file keeps its mode (an operator may have chosen it);
 * `looseFiles` names those readable by group or others, for the boot to warn.
 */
export function createPrivateSqliteFile(filename: string, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(dirname(filename), { recursive: true, mode: 0o700 });
  // 'a': create when absent, never truncate; the mode applies only to a new file (and umask can only narrow it).
  closeSync(openSync(filename, 'a', 0o600));
}

/** The data directory, database, WAL and SHM files that group or others may read or enter (POSIX only). */
export function looseFiles(filename: string, dataDir: string): { path: string; mode: string }[] {
  if (process.platform === 'win32') return [];
  const out: { path: string; mode: string }[] = [];
  for (const path of [dataDir, dirname(filename), filename, `${filename}-wal`, `${filename}-shm`]) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue; // absent: nothing to warn about
    }
    if ((mode & 0o077) !== 0 && !out.some((f) => f.path === path)) out.push({ path, mode: mode.toString(8).padStart(4, '0') });
  }
  return out;
}
