import { ProblemError } from '../../errors/index.js';

/**
 * A team's `webhook`: the incoming-webhook URL of the team's corporate channel, as the vendor's clients
 * carry it (horizon-go v2 models/model_webhook.go: {type, url}, both required; horizon-mcp
 * src/tools/config/teams.ts: type `slack` (also Mattermost) or `teams`).
 *
 * Stored and answered only: no Certwright feature posts to it yet. The slack and teams trigger channels
 * take their own URL per trigger; a channel that notifies "the certificate's team" would read this one
 * (through the egress check, as those channels do).
 */
export interface TeamWebhook {
  type: 'slack' | 'teams';
  url: string;
}

export const WEBHOOK_TYPES = ['slack', 'teams'] as const;

export const webhookInput = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['type', 'url'],
  properties: {
    type: { type: 'string', enum: WEBHOOK_TYPES },
    url: { type: 'string', minLength: 1, maxLength: 2048 },
  },
} as const;

export const webhookOutput = {
  type: ['object', 'null'],
  required: ['type', 'url'],
  properties: { type: { type: 'string', enum: WEBHOOK_TYPES }, url: { type: 'string' } },
} as const;

/** The webhook to store: an absolute http(s) URL with a host, else 400 with the team family's *-002 code. */
export function webhookOf(given: TeamWebhook | null | undefined): TeamWebhook | null {
  if (!given) return null;
  let url: URL;
  try {
    url = new URL(given.url);
  } catch {
    throw new ProblemError('SEC-TEAM-002', { message: 'webhook.url is not a URL' });
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw new ProblemError('SEC-TEAM-002', { message: 'webhook.url must be an http or https URL' });
  }
  // Kept as sent: the path and query of a webhook URL are often its credential, rewriting them could break it.
  return { type: given.type, url: given.url };
}

export const webhookColumns = (w: TeamWebhook | null) => ({ webhook_type: w?.type ?? null, webhook_url: w?.url ?? null });

export function webhookFromRow(row: Record<string, unknown>): TeamWebhook | null {
  return typeof row.webhook_type === 'string' && typeof row.webhook_url === 'string'
    ? { type: row.webhook_type as TeamWebhook['type'], url: row.webhook_url }
    : null;
}
