import { randomBytes } from 'node:crypto';
import { durationMs } from './duration.js';
import { isObject, refused } from './refuse.js';
import type { HorizonMapping } from './state.js';

const TEMPLATE = /\{\{/;
// The webhook channel's own bounds on a delivery deadline (plugins/trigger-webhook targetSchema).
const TIMEOUT_MIN_MS = 100;
const TIMEOUT_MAX_MS = 120_000;

/**
 * type "rest" → channel `webhook`: Certwright's REST notification is one signed JSON POST of the event
 * (plugins/trigger-webhook). So a sequence is one step, POST, without authentication, proxy or
 * templates in the URL and headers; `expectedHttpCodes` may only name 2xx codes (the channel counts
 * any 2xx as delivered). `payload` and `payloadType` are kept and answered back, but the body sent is
 * the channel's event JSON. `keepSecret`: the trigger already has a webhook signing secret, which an
 * update keeps; otherwise one is generated (Horizon's shape has no field for it; the Certwright shape
 * can set target.secret).
 */
export function restMapping(body: Record<string, unknown>, keepSecret: boolean): HorizonMapping {
  const sequence = body.sequence;
  if (!Array.isArray(sequence) || sequence.length === 0) throw refused('sequence', 'a REST notification needs one request');
  if (sequence.length > 1) throw refused('sequence', `Certwright sends one request per trigger (the webhook channel); ${sequence.length} steps were given`);
  const step = sequence[0];
  const at = 'sequence[0]';
  if (!isObject(step)) throw refused(at, 'a request {url, method, authenticationType, expectedHttpCodes, timeout, headers, payloadType, payload}');
  if (typeof step.url !== 'string' || !/^https?:\/\//i.test(step.url)) throw refused(`${at}.url`, 'an http(s) URL is required');
  if (TEMPLATE.test(step.url)) throw refused(`${at}.url`, 'templates in the URL are not supported: the URL is sent as written');
  const method = typeof step.method === 'string' ? step.method.toUpperCase() : 'POST';
  if (method !== 'POST') throw refused(`${at}.method`, `the webhook channel sends POST only, not ${method}`);
  const auth = step.authenticationType ?? 'noauth';
  if (auth !== 'noauth') throw refused(`${at}.authenticationType`, `"${String(auth)}" has no counterpart: Certwright stores no credentials for triggers (the receiver verifies the X-Certwright-Signature HMAC instead)`);
  if (step.credentials !== undefined && step.credentials !== null) throw refused(`${at}.credentials`, 'Certwright stores no credentials for triggers');
  if (step.proxy !== undefined && step.proxy !== null) throw refused(`${at}.proxy`, 'Certwright has no HTTP proxies: the channel connects directly');
  const codes = step.expectedHttpCodes;
  if (codes !== undefined && codes !== null) {
    if (!Array.isArray(codes) || codes.some((c) => !Number.isInteger(c))) throw refused(`${at}.expectedHttpCodes`, 'a list of HTTP status codes');
    const other = codes.filter((c: number) => c < 200 || c > 299);
    if (other.length > 0) throw refused(`${at}.expectedHttpCodes`, `${other.join(', ')}: the webhook channel counts 2xx answers as delivered and nothing else`);
  }

  const target: Record<string, unknown> = { url: step.url };
  if (step.headers !== undefined && step.headers !== null) {
    if (!Array.isArray(step.headers)) throw refused(`${at}.headers`, 'a list of {name, value}');
    const headers: Record<string, string> = {};
    step.headers.forEach((h: unknown, i: number) => {
      const field = `${at}.headers[${i}]`;
      if (!isObject(h) || typeof h.name !== 'string' || typeof h.value !== 'string') throw refused(field, 'a header is {name, value}');
      const { name, value } = h;
      if (TEMPLATE.test(value)) throw refused(`${field}.value`, 'templates in headers are not supported: the value is sent as written');
      if (Object.keys(headers).some((n) => n.toLowerCase() === name.toLowerCase())) throw refused(`${field}.name`, `"${name}" is given twice`);
      headers[name] = value;
    });
    if (Object.keys(headers).length > 0) target.headers = headers;
  }
  if (step.timeout !== undefined && step.timeout !== null) {
    const ms = durationMs(step.timeout);
    if (ms === null || ms < TIMEOUT_MIN_MS || ms > TIMEOUT_MAX_MS) throw refused(`${at}.timeout`, `a duration between ${TIMEOUT_MIN_MS} ms and ${TIMEOUT_MAX_MS / 1000} seconds, such as "30 seconds"`);
    target.timeoutMs = ms;
  }
  if (!keepSecret) target.secret = randomBytes(32).toString('hex');
  return { channel: 'webhook', target, fields: { sequence } };
}
