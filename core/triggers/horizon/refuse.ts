import { ProblemError } from '../../errors/index.js';

/**
 * A Horizon-shape body Certwright cannot honour: TRG-002, the detail naming the field first. The
 * vendor's clients read the code's suffix (client-compat §6: 002 = validation).
 */
export const refused = (field: string, why: string): ProblemError => new ProblemError('TRG-002', { detail: `${field}: ${why}` });

// The refusals of checkTrigger that are validation in the client's eyes, whatever Certwright calls them.
const VALIDATION_CODES = new Set(['TRG-005', 'TRG-006', 'TRG-007', 'TRG-008']);

/**
 * Runs a check of a Horizon-shape body. Its refusals come back as TRG-002 with the original code kept
 * in the detail, because the channel and target were derived from the Horizon keys: a TRG-006 about a
 * target the client never sent would mislead, and the client only knows -002 as "invalid".
 */
export function asValidation<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ProblemError && VALIDATION_CODES.has(err.code)) throw new ProblemError('TRG-002', { detail: `${err.code}: ${err.detail ?? err.message}` });
    throw err;
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
