import type { EventCodeEntry } from '../events/catalogue.js';

const request = { requestId: 'Request _id', workflow: 'Workflow', profile: 'Profile', requester: 'Who submitted it' } as const;

/**
 * Event codes raised by requests, workflows and challenges: spread into core/events/catalogue.ts. The
 * lifecycle codes triggers react to (CERTIFICATE-ISSUED/RENEWED/REVOKED, REQUEST-PENDING/APPROVED/DENIED)
 * are catalogued there; these are the others.
 */
export const REQUEST_EVENTS: readonly EventCodeEntry[] = [
  { code: 'REQUEST-SUBMITTED', module: 'webra', description: 'A request was submitted (POST /api/v1/requests/submit)', statuses: ['success'], objectType: 'request', payload: { ...request, status: 'Status it entered' } },
  { code: 'REQUEST-CANCELED', module: 'webra', description: 'A pending request was canceled', statuses: ['success'], objectType: 'request', payload: request },
  {
    code: 'REQUEST-COMPLETED',
    module: 'webra',
    description: 'A request completed (its workflow ran: certificate issued, revoked, updated, …)',
    statuses: ['success'],
    objectType: 'request',
    payload: { ...request, certificateId: 'Certificate the request produced or acted on' },
  },
  {
    code: 'REQUEST-FAILED',
    module: 'webra',
    description: 'The PKI connector finally refused a request (or its queue gave up): the request is denied with `error`',
    statuses: ['failure'],
    objectType: 'request',
    payload: { ...request, error: 'Why' },
  },
  { code: 'CHALLENGE-ISSUED', module: 'webra', description: 'A one-time challenge was issued on an approved request of a challenge profile', statuses: ['success'], objectType: 'request', payload: { ...request, expiresAt: 'When it expires (epoch ms)' } },
  { code: 'CHALLENGE-CONSUMED', module: 'webra', description: 'A challenge was consumed (POST /api/v1/challenge/submit)', statuses: ['success'], objectType: 'request', payload: request },
  { code: 'CERTIFICATE-UPDATED', module: 'webra', description: 'A certificate was updated by the update workflow (labels, owner, team, contact, metadata)', statuses: ['success'], objectType: 'certificate', payload: { requestId: 'Request _id', changed: 'Names of the changed properties' } },
  { code: 'CERTIFICATE-MIGRATED', module: 'webra', description: 'A certificate moved to another profile (migrate workflow)', statuses: ['success'], objectType: 'certificate', payload: { requestId: 'Request _id', from: 'Previous profile', to: 'New profile' } },
  { code: 'CERTIFICATE-RECOVERED', module: 'webra', description: 'The escrowed key of a certificate was handed back as a PKCS#12 (recover workflow)', statuses: ['success'], objectType: 'certificate', payload: { requestId: 'Request _id', requester: 'Who asked for it' } },
  { code: 'CERTIFICATE-ENROLL-IMPORTED', module: 'webra', description: 'An existing certificate (and optionally its private key) was imported into a profile (import workflow)', statuses: ['success'], objectType: 'certificate', payload: { requestId: 'Request _id', profile: 'Profile', escrowed: 'Its private key was escrowed' } },
];
