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
}

export interface DeliveryResult {
  delivered: boolean;
  retryable: boolean;
  detail?: string;
}

/** A notification channel (webhook, email, chat...). `target` is the trigger's channel configuration. */
export interface TriggerChannel<Target extends object = object> {
  validateTarget(target: unknown): target is Target;
  send(event: CertwrightEvent, target: Target): Promise<DeliveryResult>;
  preview?(event: CertwrightEvent): string;
}
