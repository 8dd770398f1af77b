import { createHash, createHmac } from 'node:crypto';
import { definePlugin, egressPolicyFrom, postJson, type CertwrightEvent, type TriggerChannel } from '@certwright/sdk';

interface WebhookTarget {
  url: string;
  secret: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** An Authorization header from a credential, read at each delivery (a rotation applies to the next one). */
  authentication?: { type: 'basic' | 'bearer'; credentials: string };
}

const AUTH_KIND = { basic: 'password', bearer: 'raw' } as const;

const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The documented body: the event with `certificate` and `trigger` always present (null when none). */
export function webhookPayload(event: CertwrightEvent): Record<string, unknown> {
  return {
    id: event.id,
    code: event.code,
    module: event.module,
    status: event.status,
    tenant: event.tenant,
    timestamp: event.timestamp,
    principal: event.principal ?? null,
    objectType: event.objectType ?? null,
    objectId: event.objectId ?? null,
    payload: event.payload,
    certificate: event.certificate ?? null,
    trigger: event.trigger ?? null,
  };
}

/** `sha256=<hex>` of HMAC-SHA256(secret, "<timestamp>.<body>"): the timestamp is signed so a replay cannot refresh it. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** One id per (event, trigger), the same on every retry, so receivers can drop duplicates. */
function deliveryId(event: CertwrightEvent): string {
  return createHash('sha256').update(`${event.id}\n${event.trigger?.name ?? ''}`).digest('hex').slice(0, 32);
}

function validUrl(url: unknown): boolean {
  if (typeof url !== 'string') return false;
  try {
    return ['https:', 'http:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** The `webhook` trigger channel: signed JSON POSTs to an administrator-configured URL, through the egress check. */
export default definePlugin({
  register(ctx) {
    const policy = egressPolicyFrom(ctx.instances[0]?.config);
    /** Basic from a password credential, Bearer from a raw one; an unusable credential fails the delivery for good. */
    const authorizationOf = async (auth: NonNullable<WebhookTarget['authentication']>, tenant: string): Promise<string> => {
      const credential = await ctx.credentials.resolve(auth.credentials, { kind: AUTH_KIND[auth.type], target: 'trigger', tenant });
      return auth.type === 'basic'
        ? `Basic ${Buffer.from(`${credential.login ?? ''}:${credential.password ?? ''}`).toString('base64')}`
        : `Bearer ${credential.secret ?? ''}`;
    };
    const channel: TriggerChannel<WebhookTarget> = {
      validateTarget(target): target is WebhookTarget {
        if (typeof target !== 'object' || target === null) return false;
        const t = target as Partial<WebhookTarget>;
        if (!validUrl(t.url) || typeof t.secret !== 'string' || t.secret.length === 0) return false;
        if (t.timeoutMs !== undefined && (!Number.isInteger(t.timeoutMs) || t.timeoutMs <= 0)) return false;
        if (t.authentication !== undefined) {
          const a = t.authentication as Partial<WebhookTarget['authentication']> | null;
          if (!a || !(a.type === 'basic' || a.type === 'bearer') || typeof a.credentials !== 'string' || a.credentials.length === 0) return false;
        }
        if (t.headers === undefined) return true;
        if (typeof t.headers !== 'object' || t.headers === null) return false;
        return Object.entries(t.headers).every(
          ([name, value]) =>
            HEADER_NAME.test(name) &&
            !RESERVED_HEADERS.has(name.toLowerCase()) &&
            !name.toLowerCase().startsWith('x-certwright-') &&
            typeof value === 'string' &&
            !/[\r\n\0]/.test(value),
        );
      },
      async send(event, target) {
        const body = JSON.stringify(webhookPayload(event));
        const timestamp = ctx.clock.now();
        const authorization = target.authentication ? await authorizationOf(target.authentication, event.tenant) : undefined;
        return postJson(ctx.http, target.url, body, {
          policy,
          ...(target.timeoutMs ? { timeoutMs: target.timeoutMs } : {}),
          headers: {
            'user-agent': 'Certwright-Webhook/1.0',
            ...target.headers,
            ...(authorization ? { authorization } : {}),
            'x-certwright-event': event.code,
            'x-certwright-event-id': event.id,
            'x-certwright-delivery': deliveryId(event),
            'x-certwright-timestamp': String(timestamp),
            'x-certwright-signature': webhookSignature(target.secret, timestamp, body),
          },
        });
      },
      preview(event) {
        return JSON.stringify(webhookPayload(event), null, 2);
      },
    };
    ctx.registries.triggerChannels.register('webhook', channel);
  },
});
