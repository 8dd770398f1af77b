import type { HorizonState } from './horizon/state.js';

/**
 * What a trigger stores beyond the columns of migration 0012: its own retry count and, for a trigger
 * written in Horizon's shape, what it keeps of that shape (horizon/state.ts). They ride in the JSON of
 * the `target` column under one reserved key, so no migration is needed; the key never reaches the
 * channel, the API or the events (model.ts splits it off on read), and a client target naming it is
 * refused (validate.ts). A dedicated column would be the place for it if the table is ever migrated.
 */
export const EXTRAS_KEY = '$extras';

export interface StoredExtras {
  retries?: number;
  horizon?: HorizonState;
}

/** The target JSON of a row → the channel's target and the extras. */
export function splitTarget(json: string): { target: Record<string, unknown>; extras: StoredExtras } {
  const { [EXTRAS_KEY]: extras, ...target } = JSON.parse(json) as Record<string, unknown>;
  return { target, extras: (extras ?? {}) as StoredExtras };
}

/** The target and the extras → the JSON of the `target` column (the bare target when there are none). */
export function joinTarget(target: Record<string, unknown>, retries: number | null, horizon: HorizonState | null): string {
  const extras: StoredExtras = { ...(retries !== null ? { retries } : {}), ...(horizon ? { horizon } : {}) };
  return JSON.stringify(Object.keys(extras).length > 0 ? { ...target, [EXTRAS_KEY]: extras } : target);
}
