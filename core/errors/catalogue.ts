import { DISCOVERY_ERRORS } from '../discovery/errors.js';
import { EVENT_ERRORS } from '../events/errors.js';
import { INTEGRITY_ERRORS } from '../events/integrity/errors.js';
import { TRIGGER_ERRORS } from '../triggers/errors.js';
import { DCV_ERRORS } from '../dcv/errors.js';
import { PKI_CONNECTOR_ERRORS } from '../pki/connectors/errors.js';
import { PROFILE_ERRORS } from '../profiles/errors.js';
import { REQUEST_ERRORS } from '../requests/errors.js';
import { INVENTORY_ERRORS } from '../inventory/errors.js';
import { PKI_ERRORS } from '../pki/errors.js';
import { QUERY_ERRORS } from '../query/errors.js';
import { SECURITY_ERRORS } from '../security/errors.js';
import { CONFIG_OBJECT_ERRORS } from '../config-objects/errors.js';
import { AUTOMATION_ERRORS } from '../automation/errors.js';
import { DATASOURCE_ERRORS } from '../datasources/error-codes.js';
import { TEMPLATESTRING_ERRORS } from '../templatestring/errors.js';
import { GRADING_ERRORS } from '../grading/errors.js';
import { REPORT_ERRORS } from '../reports/errors.js';

/**
 * Every error code the API answers, in one place: the HTTP status, the title, and the default message.
 * Codes are stable: clients key on them (client-compat §6). Add new codes here, never inline.
 */
export interface CatalogueEntry {
  status: number;
  title: string;
  message: string;
}

const INVALID_CREDENTIALS = 'Invalid credentials or principal does not exist';

export const ERROR_CATALOGUE = {
  // Authentication (spec "Errors": SecAuth001…009 are 401).
  'SEC-AUTH-001': { status: 401, title: 'Authentication required', message: 'This operation requires authentication' },
  'SEC-AUTH-002': { status: 401, title: INVALID_CREDENTIALS, message: INVALID_CREDENTIALS },
  'SEC-AUTH-003': { status: 401, title: 'Session expired', message: 'The session has expired, authenticate again' },
  'SEC-AUTH-004': { status: 401, title: 'Identity provider disabled', message: 'The identity provider of this principal is disabled' },
  'SEC-AUTH-005': { status: 401, title: 'Principal disabled', message: 'The principal is disabled' },
  'SEC-AUTH-006': { status: 401, title: 'Untrusted client certificate', message: 'The client certificate is not trusted for authentication' },
  'SEC-AUTH-007': { status: 401, title: 'Invalid service account token', message: 'The service account token was refused' },
  'SEC-AUTH-008': { status: 401, title: 'Proof of possession required', message: 'proof required' },
  'SEC-AUTH-009': { status: 401, title: 'Unsupported authentication method', message: 'This authentication method is not accepted here' },
  'SEC-PERM-001': { status: 403, title: 'Insufficient permission', message: 'The principal does not hold the permission this operation requires' },
  // Licensing.
  'LIC-001': { status: 500, title: 'License failure', message: 'The license could not be verified' },
  'LIC-002': { status: 403, title: 'License expired', message: 'The license has expired' },
  'LIC-004': { status: 403, title: 'Module not licensed', message: 'The license does not grant this module' },
  // HTTP layer.
  'HTTP-001': { status: 404, title: 'Not found', message: 'No such resource' },
  'HTTP-002': { status: 400, title: 'Malformed body', message: 'The request body could not be parsed' },
  'HTTP-003': { status: 400, title: 'Invalid request', message: 'The request does not match the expected schema' },
  'HTTP-004': { status: 415, title: 'Unsupported media type', message: 'The request content type is not accepted here' },
  'HTTP-005': { status: 413, title: 'Payload too large', message: 'The request body exceeds the size limit' },
  'HTTP-006': { status: 405, title: 'Method not allowed', message: 'The method is not allowed on this resource' },
  'HTTP-007': { status: 503, title: 'Shutting down', message: 'The service is shutting down' },
  'HTTP-008': { status: 400, title: 'Bad request', message: 'The request could not be understood' },
  // Server.
  'SRV-001': { status: 500, title: 'Internal error', message: 'An internal error occurred; the request id identifies it in the logs' },
  'SRV-002': { status: 503, title: 'Not ready', message: 'The service is not ready' },
  // The worker pool of CPU-heavy decodes (core/workers): full for everyone, or for this principal. Both carry Retry-After.
  'SRV-003': { status: 503, title: 'Busy', message: 'Too many CPU-heavy decodes are waiting: retry later' },
  'SRV-004': { status: 429, title: 'Too many decodes', message: 'This principal already has as many CPU-heavy decodes in flight as it may: retry later' },
  // Scheduled tasks.
  'SCHED-002': { status: 400, title: 'Invalid scheduled task', message: 'The scheduled task is not valid' },
  'SCHED-003': { status: 404, title: 'Scheduled task not found', message: 'No scheduled task has this name or id' },
  'SCHED-004': { status: 400, title: 'Scheduled task exists', message: 'A scheduled task with this name already exists' },
  // Security core (core/security/errors.ts).
  ...SECURITY_ERRORS,
  // PKI toolkit, CAs, trust chains, CRL cache (core/pki/errors.ts).
  ...PKI_ERRORS,
  // Query languages (core/query/errors.ts).
  ...QUERY_ERRORS,
  // Certificate inventory and labels (core/inventory/errors.ts).
  ...INVENTORY_ERRORS,
  // Discovery events (core/discovery/errors.ts).
  ...DISCOVERY_ERRORS,
  // Events API and analytics (core/events/errors.ts).
  ...EVENT_ERRORS,
  // Event integrity and checkpoints (core/events/integrity/errors.ts).
  ...INTEGRITY_ERRORS,
  // Triggers (core/triggers/errors.ts).
  ...TRIGGER_ERRORS,
  // Domain control validation lifecycle (core/dcv/errors.ts).
  ...DCV_ERRORS,
  // PKI connectors and queues (core/pki/connectors/errors.ts).
  ...PKI_CONNECTOR_ERRORS,
  // Certificate profiles (core/profiles/errors.ts).
  ...PROFILE_ERRORS,
  // Requests, workflows, challenges (core/requests/errors.ts).
  ...REQUEST_ERRORS,
  // Configuration export/import and the cookbook (core/config-objects/errors.ts).
  ...CONFIG_OBJECT_ERRORS,
  // Automation: execution policies (core/automation/errors.ts).
  ...AUTOMATION_ERRORS,
  ...DATASOURCE_ERRORS,
  // Computation rules and template strings (core/templatestring/errors.ts).
  ...TEMPLATESTRING_ERRORS,
  // Certificate grading (core/grading/errors.ts).
  ...GRADING_ERRORS,
  // Stored CSV reports (core/reports/errors.ts).
  ...REPORT_ERRORS,
  // Secrets at rest.
  'SECRET-001': { status: 500, title: 'Secret unreadable', message: 'A stored secret could not be decrypted' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
