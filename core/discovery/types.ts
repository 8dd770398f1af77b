/** Discovery events (client-compat §5). */

export const DISCOVERY_EVENT_STATUSES = ['success', 'warning', 'failure'] as const;
export type DiscoveryEventStatus = (typeof DISCOVERY_EVENT_STATUSES)[number];

/** Codes the clients send (client-compat §5); the set is open, these are for the dictionary and docs. */
export const DISCOVERY_EVENT_CODES = ['LOCALSCAN', 'NETSCAN', 'IMPORTSCAN', 'LOCALIMPORT', 'NETIMPORT', 'EST', 'ACME', 'WEBRA', 'SESSION-END'] as const;

/** One event as the feed's PUT sends it; null and absent are the same. Unknown keys are ignored. */
export interface DiscoveryEventInput {
  campaign: string;
  sessionId?: string | null;
  code: string;
  status: DiscoveryEventStatus;
  errorCode?: string | null;
  errorMessage?: string | null;
  hostname?: string | null;
  ip?: string | null;
  port?: number | null;
  source?: string | null;
}

/** What the server knows of a submission, never read from the body: who sent it and from where. */
export interface DiscoveryEventOrigin {
  clientVersion?: string | null;
  clientIp?: string | null;
  clientId?: string | null;
  /** The inventory certificate the events are about (a feed POST's certificate). */
  certificateId?: string | null;
}

/** The stored event, as search results and GET /api/v1/discovery/events/:id answer it. */
export interface StoredDiscoveryEvent {
  _id: string;
  campaign: string;
  sessionId: string | null;
  code: string;
  status: DiscoveryEventStatus;
  errorCode: string | null;
  errorMessage: string | null;
  hostname: string | null;
  ip: string | null;
  port: number | null;
  source: string | null;
  /** Epoch ms, when the service recorded the event. */
  timestamp: number;
  clientVersion: string | null;
  clientIp: string | null;
  clientId: string | null;
  certificateId: string | null;
}
