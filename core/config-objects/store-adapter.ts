import { isUniqueViolation } from '../db/unique.js';
import { ProblemError } from '../errors/index.js';

/**
 * For store adapters over a collection's own repository: the write's result, or null when it failed because
 * the name is taken (a unique key, or the collection's own "exists" problem), which the registry answers as
 * the type's -004.
 */
export async function unlessTaken<T>(write: () => Promise<T>, takenCode?: string): Promise<T | null> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err) || (takenCode !== undefined && err instanceof ProblemError && err.code === takenCode)) return null;
    throw err;
  }
}

/** The read's result, or null when the collection answers its "not found" problem (the registry's -003). */
export async function unlessMissing<T>(read: () => Promise<T>, notFoundCode: string): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof ProblemError && err.code === notFoundCode) return null;
    throw err;
  }
}
