import { CABF_SCHEDULE, type ValidityStep } from '../grading/cabf.js';

/**
 * The schedules `simulate renewals --schedule` knows, by name. `cabf` is the CA/B Forum's (ballot SC-081),
 * kept in core/grading/cabf.ts with the grading rule that checks it, so both read the same dates.
 */
export const SCHEDULES: Readonly<Record<string, readonly ValidityStep[]>> = { cabf: CABF_SCHEDULE };

export const scheduleNames = (): string[] => Object.keys(SCHEDULES);

/** The schedule called `name`, or undefined. */
export const scheduleNamed = (name: string): readonly ValidityStep[] | undefined => (Object.hasOwn(SCHEDULES, name) ? SCHEDULES[name] : undefined);
