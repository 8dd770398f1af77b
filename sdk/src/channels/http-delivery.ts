import { EgressDeniedError, PermanentError, ConfigurationError } from '../errors.js';
import type { EgressHttpClient } from '../context.js';
import type { DeliveryResult } from '../contracts/trigger-channel.js';
import type { EgressPolicy } from '../egress-policy.js';

export interface JsonPostOptions {
  policy?: Partial<EgressPolicy>;
  headers?: Record<string, string>;
  /** Overrides the policy's timeoutMs for this request. */
  timeoutMs?: number;
}

const FIXED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection']);

/** First characters of an answer, on one line, for a delivery's detail. */
function snippet(body: string): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * How a trigger channel reads an HTTP answer: 2xx delivered; 408, 429 and 5xx retried; redirects (never
 * followed: the destination is configured, so a move needs an administrator) and other 4xx are not retried.
 */
export function deliveryFromStatus(status: number, body: string): DeliveryResult {
  if (status >= 200 && status < 300) return { delivered: true, retryable: false, detail: `HTTP ${status}` };
  const said = body ? `: ${snippet(body)}` : '';
  if (status >= 300 && status < 400) return { delivered: false, retryable: false, detail: `HTTP ${status}: redirect not followed (configure the final URL)` };
  const retryable = status === 408 || status === 429 || status >= 500;
  return { delivered: false, retryable, detail: `HTTP ${status}${said}` };
}

/** How a trigger channel reads a failed request: refusals and invalid requests are final, the rest retried. */
export function deliveryFromError(err: unknown): DeliveryResult {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof EgressDeniedError) return { delivered: false, retryable: false, detail: `egress refused: ${message}` };
  if (err instanceof PermanentError || err instanceof ConfigurationError) return { delivered: false, retryable: false, detail: message };
  return { delivered: false, retryable: true, detail: message };
}

/**
 * POSTs `body` as JSON to an administrator-configured URL through the egress check and answers a
 * DeliveryResult (never throws). Shared by the webhook and chat channels.
 */
export async function postJson(http: EgressHttpClient, url: string, body: string | object, options: JsonPostOptions = {}): Promise<DeliveryResult> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  // The body is JSON and its length is computed: no extra header may say otherwise.
  const extra = Object.fromEntries(Object.entries(options.headers ?? {}).filter(([name]) => !FIXED_HEADERS.has(name.toLowerCase())));
  const policy = options.timeoutMs ? { ...options.policy, timeoutMs: options.timeoutMs } : options.policy;
  try {
    const res = await http.fetchConfigured(
      url,
      { method: 'POST', headers: { 'user-agent': 'Certwright', ...extra, 'content-type': 'application/json' }, body: text },
      policy,
    );
    return deliveryFromStatus(res.status, res.body);
  } catch (err) {
    return deliveryFromError(err);
  }
}
