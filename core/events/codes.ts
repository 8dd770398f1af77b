/**
 * Codes of the certificate and request lifecycle events that triggers react to (core/triggers). Raised by
 * the inventory (imported), the expiry scan (expiring), the request workflow (issued, renewed, revoked,
 * request states) and DCV and discovery. The catalogue of every event code is in this folder too.
 */
export const LIFECYCLE_EVENT_CODES = {
  issued: 'CERTIFICATE-ISSUED',
  imported: 'CERTIFICATE-IMPORTED',
  renewed: 'CERTIFICATE-RENEWED',
  revoked: 'CERTIFICATE-REVOKED',
  expiring: 'CERTIFICATE-EXPIRING',
  discovered: 'CERTIFICATE-DISCOVERED',
  requestPending: 'REQUEST-PENDING',
  requestApproved: 'REQUEST-APPROVED',
  requestDenied: 'REQUEST-DENIED',
  dcvFailure: 'DCV-FAILURE',
  automationFailure: 'AUTOMATION-RENEWAL-FAILED',
} as const;
