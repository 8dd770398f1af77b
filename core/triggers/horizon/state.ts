/** The trigger types of Horizon's shape that map onto a Certwright channel. */
export const HORIZON_TYPES = ['email', 'webhook', 'rest'] as const;
export type HorizonType = (typeof HORIZON_TYPES)[number];

/**
 * Horizon's publication triggers (a third-party connector hook): Certwright has no third-party
 * connectors yet, so these are refused by name rather than as unknown.
 */
export const HORIZON_THIRD_PARTY_TYPES = ['akv', 'f5client', 'f5as3', 'aws', 'intunepkcs', 'gcm', 'ldappub', 'netscaler', 'fortigate', 'fortimanager', 'panos_firewall', 'panos_panorama'];

/**
 * What a trigger written in Horizon's shape keeps of it, to answer it back: its `type` and the subtype
 * keys (emailTemplate, webhookTemplate, sequence, attach*, runPeriod, …) as sent, except what the
 * Certwright target already holds (the email title and body) and with secret values masked (a webhook
 * URL that the channel seals). The Certwright fields stay the truth the trigger runs on; this is
 * written with them, in the same write, and dropped by a write in Certwright's shape.
 */
export interface HorizonState {
  type: HorizonType;
  fields: Record<string, unknown>;
}

/** What a Horizon subtype maps to: a channel, its target, and the fields kept to answer back. */
export interface HorizonMapping {
  channel: string;
  target: Record<string, unknown>;
  fields: Record<string, unknown>;
}
