/** What a trigger tells a channel about the certificate an event concerns (client-compat §3 names). */
export interface EventCertificate {
  _id: string;
  dn: string;
  serial: string;
  issuer: string;
  notBefore: number;
  notAfter: number;
  revoked: boolean;
  profile?: string | null;
  owner?: string | null;
  team?: string | null;
  contactEmail?: string | null;
  subjectAlternateNames: { sanType: string; value: string }[];
  labels: { key: string; value: string }[];
}

/** The trigger a delivery runs for: its name and the trigger event (`expiring`, `revoked`, …) it matched. */
export interface EventTrigger {
  name: string;
  event: string;
  /** Expiry thresholds only: the threshold in days that was crossed. */
  thresholdDays?: number;
}

/** An event as handed to trigger channels. Dates are epoch milliseconds. */
export interface CertwrightEvent {
  id: string;
  code: string;
  module: string;
  status: 'success' | 'failure' | 'warning';
  tenant: string;
  principal?: string | null;
  objectType?: string | null;
  objectId?: string | null;
  payload: Record<string, unknown>;
  timestamp: number;
  /** Set on deliveries: the certificate the event concerns, when it concerns one. */
  certificate?: EventCertificate | null;
  /** Set on deliveries: the trigger being run. */
  trigger?: EventTrigger;
}

export interface DeliveryResult {
  delivered: boolean;
  retryable: boolean;
  detail?: string;
}

/**
 * A notification channel (webhook, email, chat...). `target` is the trigger's channel configuration, already
 * validated against the manifest's `targetSchema`; `validateTarget` checks what a schema cannot say.
 * `send` never throws for a delivery failure: it answers `{delivered: false, retryable}`.
 */
export interface TriggerChannel<Target extends object = object> {
  validateTarget(target: unknown): target is Target;
  send(event: CertwrightEvent, target: Target): Promise<DeliveryResult>;
  preview?(event: CertwrightEvent): string;
}
