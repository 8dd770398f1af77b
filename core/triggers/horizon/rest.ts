import { randomBytes } from 'node:crypto';
import { parseFiniteDuration as durationMs } from '../../http/finite-duration.js';
import { isObject, refused } from './refuse.js';
import type { HorizonMapping } from './state.js';

const TEMPLATE = /\{\{/;
// The webhook channel's own bounds on a delivery deadline (plugins/trigger-webhook targetSchema).
const TIMEOUT_MIN_MS = 100;
const TIMEOUT_MAX_MS = 120_000;

/**
 * The keys of one REST request. Horizon's API up to 2.9 (horizon-go v2 docs/REST.md @46c9c95) has them at the
 * top level of a `rest` trigger; later versions (docs/REST.md @6fc5fe1, horizon-mcp) list them in `sequence`.
 */
export const REST_STEP_KEYS = ['url', 'method', 'authenticationType', 'credentials', 'expectedHttpCodes', 'timeout', 'headers', 'payloadType', 'payload', 'proxy'] as const;

type Json = Record<string, unknown>;

/** Order-insensitive comparison of two JSON values (an echoed object may list its keys in another order; absent reads as null). */
const canonical = (v: unknown): string =>
  Array.isArray(v) ? `[${v.map(canonical).join(',')}]` : v !== null && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`).join(',')}}` : JSON.stringify(v ?? null);
export const sameJson = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/**
 * The top-level keys a `rest` trigger answers beside `sequence`, read from its one step, so that a client of
 * either API version finds the request where it looks (the older RESTResponse requires url, method,
 * authenticationType, expectedHttpCodes and timeout). Values the step leaves out read as what Certwright
 * does: POST, noauth; a missing timeout or success-code list reads null (the channel's deadline, any 2xx).
 */
export function restTopLevelOf(sequence: unknown): Json {
  const step = Array.isArray(sequence) && isObject(sequence[0]) ? sequence[0] : {};
  return {
    url: step.url ?? null,
    method: typeof step.method === 'string' ? step.method.toUpperCase() : 'POST',
    authenticationType: step.authenticationType ?? 'noauth',
    expectedHttpCodes: step.expectedHttpCodes ?? null,
    timeout: step.timeout ?? null,
    ...(step.headers !== undefined && step.headers !== null ? { headers: step.headers } : {}),
    ...(step.payloadType !== undefined ? { payloadType: step.payloadType } : {}),
    ...(step.payload !== undefined ? { payload: step.payload } : {}),
  };
}

/**
 * The REST request of a `rest` body and where its keys are (for the field named in a refusal): `sequence`
 * as sent, or the top-level keys of the older shape made into a one-step sequence. Both at once is what a
 * GET → PUT echoes (the answer carries both): the top-level keys must then say what `sequence` says, or
 * be the trigger's current ones left unchanged (the client changed `sequence`), or `sequence` must be the
 * current one (the client changed the top-level keys); otherwise which was meant is unknown.
 */
export function restSequenceOf(body: Json, currentSequence: unknown): { sequence: unknown; at: (field: string) => string } {
  const inSequence = (field: string): string => `sequence[0].${field}`;
  const topLevel = (field: string): string => field;
  const given = REST_STEP_KEYS.filter((k) => body[k] !== undefined);
  const hasSequence = body.sequence !== undefined && body.sequence !== null;
  const stepOfTopLevel = (): Json[] => [Object.fromEntries(given.filter((k) => body[k] !== null).map((k) => [k, body[k]]))];
  if (!hasSequence) {
    if (given.length === 0) throw refused('sequence', 'a REST notification needs its request: `sequence` [{url, method, …}], or url, method, … at the top level');
    return { sequence: stepOfTopLevel(), at: topLevel };
  }
  if (given.length === 0) return { sequence: body.sequence, at: inSequence };
  const agree = (shown: Json): string | undefined => given.find((k) => !sameJson(body[k], shown[k]));
  const differs = agree(restTopLevelOf(body.sequence));
  if (differs === undefined) return { sequence: body.sequence, at: inSequence };
  if (currentSequence !== undefined) {
    if (agree(restTopLevelOf(currentSequence)) === undefined) return { sequence: body.sequence, at: inSequence };
    if (sameJson(body.sequence, currentSequence)) return { sequence: stepOfTopLevel(), at: topLevel };
  }
  throw refused(differs, 'differs from sequence[0]: send the request either as `sequence` or as url, method, … at the top level');
}

/**
 * type "rest" → channel `webhook`: Certwright's REST notification is one signed JSON POST of the event
 * (plugins/trigger-webhook). So a sequence is one step, POST, without authentication, proxy or
 * templates in the URL and headers; `expectedHttpCodes` may only name 2xx codes (the channel counts
 * any 2xx as delivered). `payload` and `payloadType` are kept and answered back, but the body sent is
 * the channel's event JSON. The request comes as `sequence` or, in the older shape, as top-level keys
 * (restSequenceOf; `currentSequence`: the trigger's on an update); it is kept as `sequence` either way.
 * `keepSecret`: the trigger already has a webhook signing secret, which an update keeps; otherwise one is
 * generated (Horizon's shape has no field for it; the Certwright shape can set target.secret).
 */
export function restMapping(body: Json, keepSecret: boolean, currentSequence?: unknown): HorizonMapping {
  const { sequence, at } = restSequenceOf(body, currentSequence);
  if (!Array.isArray(sequence) || sequence.length === 0) throw refused('sequence', 'a REST notification needs one request');
  if (sequence.length > 1) throw refused('sequence', `Certwright sends one request per trigger (the webhook channel); ${sequence.length} steps were given`);
  const step = sequence[0];
  if (!isObject(step)) throw refused('sequence[0]', 'a request {url, method, authenticationType, expectedHttpCodes, timeout, headers, payloadType, payload}');
  if (typeof step.url !== 'string' || !/^https?:\/\//i.test(step.url)) throw refused(at('url'), 'an http(s) URL is required');
  if (TEMPLATE.test(step.url)) throw refused(at('url'), 'templates in the URL are not supported: the URL is sent as written');
  const method = typeof step.method === 'string' ? step.method.toUpperCase() : 'POST';
  if (method !== 'POST') throw refused(at('method'), `the webhook channel sends POST only, not ${method}`);
  const auth = step.authenticationType ?? 'noauth';
  if (auth !== 'noauth' && auth !== 'basic' && auth !== 'bearer') throw refused(at('authenticationType'), `"${String(auth)}" is not supported: noauth, or basic / bearer with credentials (the receiver can also verify the X-Certwright-Signature HMAC)`);
  const credentials = step.credentials ?? null;
  if (auth === 'noauth' && credentials !== null) throw refused(at('credentials'), 'credentials go with authenticationType basic or bearer');
  if (auth !== 'noauth' && (typeof credentials !== 'string' || credentials.length === 0)) throw refused(at('credentials'), `the name of a ${auth === 'basic' ? 'password' : 'raw'} credential (/api/v1/security/credentials/)`);
  if (step.proxy !== undefined && step.proxy !== null) throw refused(at('proxy'), 'proxies are chosen by destination: give the HTTP proxy (/api/v1/proxy/httpproxies/) this host in its destinations');
  const codes = step.expectedHttpCodes;
  if (codes !== undefined && codes !== null) {
    if (!Array.isArray(codes) || codes.some((c) => !Number.isInteger(c))) throw refused(at('expectedHttpCodes'), 'a list of HTTP status codes');
    const other = codes.filter((c: number) => c < 200 || c > 299);
    if (other.length > 0) throw refused(at('expectedHttpCodes'), `${other.join(', ')}: the webhook channel counts 2xx answers as delivered and nothing else`);
  }

  const target: Json = { url: step.url };
  if (step.headers !== undefined && step.headers !== null) {
    if (!Array.isArray(step.headers)) throw refused(at('headers'), 'a list of {name, value}');
    const headers: Record<string, string> = {};
    step.headers.forEach((h: unknown, i: number) => {
      const field = `${at('headers')}[${i}]`;
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
    if (ms === null || ms < TIMEOUT_MIN_MS || ms > TIMEOUT_MAX_MS) throw refused(at('timeout'), `a duration between ${TIMEOUT_MIN_MS} ms and ${TIMEOUT_MAX_MS / 1000} seconds, such as "30 seconds"`);
    target.timeoutMs = ms;
  }
  if (auth !== 'noauth') target.authentication = { type: auth, credentials };
  if (!keepSecret) target.secret = randomBytes(32).toString('hex');
  return { channel: 'webhook', target, fields: { sequence } };
}
