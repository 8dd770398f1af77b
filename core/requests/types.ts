import type { KeyValue } from '../inventory/types.js';

export type { KeyValue };

/**
 * Request states (interface-spec "States and transitions"). v2 Go decodes `status` against exactly these
 * five (client-compat §2.5), so the list is closed: HRQL refuses other values, the store other writes.
 */
export const REQUEST_STATUSES = ['pending', 'approved', 'denied', 'canceled', 'completed'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** Workflows clients send (client-compat §2.2). */
export const REQUEST_WORKFLOWS = ['enroll', 'renew', 'revoke', 'update', 'migrate', 'recover', 'import'] as const;
export type RequestWorkflow = (typeof REQUEST_WORKFLOWS)[number];

/**
 * The stored part of the request object of client-compat §2.5. The keys v2 Go requires (`_id`, module,
 * workflow, status, profile, template, holderId, registrationDate, lastModificationDate, removeAt) are
 * always present, null when unset; labels, metadata, retryCount and dryRun too; other keys are left out
 * when unset. certificate / certificatePem, pkcs12, password, the holder counts (GET), triggerResults and
 * permissions are not stored here: the routes add them.
 */
export interface RequestObject {
  _id: string;
  module: string;
  workflow: RequestWorkflow;
  status: RequestStatus;
  profile: string | null;
  template: Record<string, unknown>;
  holderId: string | null;
  registrationDate: number;
  lastModificationDate: number;
  removeAt: number | null;
  labels: KeyValue[];
  metadata: KeyValue[];
  retryCount: number;
  dryRun: boolean;
  dn?: string;
  requester?: string;
  approver?: string;
  contact?: string;
  team?: string;
  requesterComment?: string;
  approverComment?: string;
  expirationDate?: number;
  certificateId?: string;
  error?: string;
  externalId?: Record<string, unknown>;
  retryAt?: number;
  requestedX509Data?: unknown;
}

/** What a transition may change: absent = unchanged, null = cleared. labels / metadata replace the lists. */
export interface RequestPatch {
  status?: RequestStatus;
  profile?: string | null;
  template?: Record<string, unknown>;
  holderId?: string | null;
  removeAt?: number | null;
  labels?: KeyValue[];
  metadata?: KeyValue[];
  retryCount?: number;
  dryRun?: boolean;
  dn?: string | null;
  approver?: string | null;
  contact?: string | null;
  team?: string | null;
  approverComment?: string | null;
  expirationDate?: number | null;
  certificateId?: string | null;
  error?: string | null;
  externalId?: Record<string, unknown> | null;
  retryAt?: number | null;
  requestedX509Data?: unknown;
}

/** A new request: the store sets `_id`, the dates and the version. requester and comment are fixed then. */
export interface NewRequest extends Omit<RequestPatch, 'status'> {
  tenant: string;
  module: string;
  workflow: RequestWorkflow;
  status: RequestStatus;
  requester?: string | null;
  requesterComment?: string | null;
}

/** A request as read, with the version an update must name. */
export interface StoredRequest {
  version: number;
  request: RequestObject;
}

export type UpdateResult = { outcome: 'updated'; stored: StoredRequest } | { outcome: 'conflict'; version: number } | { outcome: 'missing' };
