import type { EventCodeEntry } from '../events/catalogue.js';

const payload = { profile: 'The profile as /api/v1/certificate/profiles/ shows it' } as const;

/** Event codes raised by certificate profiles: spread into core/events/catalogue.ts. */
export const PROFILE_EVENTS: readonly EventCodeEntry[] = [
  {
    code: 'PROFILE-CREATED',
    module: 'profiles',
    description: 'A certificate profile was created (/api/v1/certificate/profiles/, or the first start: principal null)',
    statuses: ['success'],
    objectType: 'profile',
    payload,
  },
  { code: 'PROFILE-UPDATED', module: 'profiles', description: 'A certificate profile was replaced (PUT /api/v1/certificate/profiles/)', statuses: ['success'], objectType: 'profile', payload },
  { code: 'PROFILE-DELETED', module: 'profiles', description: 'A certificate profile was deleted (requests and certificates keep its name)', statuses: ['success'], objectType: 'profile', payload },
];
