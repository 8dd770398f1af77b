/** A PKI back-end that issues and revokes certificates (DESIGN.md §1). A connector never sleeps: it answers pending. */
export interface IssueRequest {
  /** Request id (24 hex), stable across retries so the back-end can deduplicate. */
  requestId: string;
  csrPem: string;
  profile: string;
  subject?: string;
  sans?: { type: string; value: string }[];
  validityDays?: number;
  extensions?: Record<string, unknown>;
}

export type IssueOutcome =
  | { status: 'issued'; certificatePem: string; chainPem: string[] }
  | { status: 'pending'; pollToken: string; retryAfterSeconds: number }
  | { status: 'rejected'; reason: string };

export interface RevokeRequest {
  certificatePem: string;
  serial: string;
  reason: string;
}

export interface PkiConnector {
  getCaChain(): Promise<string[]>;
  issue(request: IssueRequest): Promise<IssueOutcome>;
  poll(pollToken: string): Promise<IssueOutcome>;
  revoke(request: RevokeRequest): Promise<void>;
  testConnection(): Promise<{ ok: boolean; detail?: string }>;
}
