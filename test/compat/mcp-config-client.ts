/**
 * The wire behaviour of the vendor's MCP server (evertrust/horizon-mcp) for its configuration tools, written
 * from its sources as facts (none of its code is copied):
 *
 * - src/client/http.ts (HorizonClient): every call carries the auth provider's headers (API key: X-API-ID +
 *   X-API-KEY, src/auth/apikey.ts) and an `X-Request-Id`; `Content-Type: application/json` only when a body
 *   is sent (GET and DELETE carry none); a lazy init first asks `GET /api/v1/security/csrf` for `{token}` or
 *   `{csrfToken}` and then sends `Csrf-Token: <token>` on every non-GET/HEAD call. Any status >= 400 is an
 *   error; a 2xx body is parsed as JSON when not empty; DELETE accepts 204 (no body) or a JSON body.
 * - src/client/errors.ts parseErrorResponse: the code is `error` (a string, or `error.code|error.error` when
 *   `error` is an object) or `code`; the message is `message` falling back to `title`; `detail` is read.
 *   Codes follow `<FAMILY>-<suffix>`: 002 validation, 003 not found, 004 exists, 005 referenced (the
 *   convention these tests hold Certwright's collections to; the client itself keys hints on the family).
 * - src/tools/config/_scaffold.ts: list = GET on the collection route (no trailing slash), the answer read
 *   by normalizeItems (an array, or `{items: [...]}`) and filtered on the string `name` of each item; get =
 *   GET on the item route with the id encodeURIComponent-ed, answered as one JSON object; create = POST on
 *   the collection with the tool's body; update = getStripMergePutExplicit: GET the item (must be one
 *   object, not an array), drop the per-object strip fields, set the overrides, PUT the whole body on the
 *   collection (putOnCollection: true for every object here); delete = DELETE on the item route; the
 *   membership tools GET/POST/DELETE `<route>/<name>/members` with a JSON array of identifiers.
 */
import type { Test } from 'tap';
import type { Kernel } from '../../core/kernel.js';
import { ADMIN_HEADERS } from '../helpers/kernel.js';

export interface McpAnswer {
  status: number;
  contentType: string | undefined;
  /** The parsed JSON body (null when the body is empty). */
  body: unknown;
  raw: string;
}

export type Json = Record<string, unknown>;

let requestSeq = 0;

/** A client that sends what horizon-mcp's HorizonClient sends, authenticated by API key as the administrator. */
export class McpClient {
  private csrf: string | undefined;
  constructor(
    private readonly kernel: Kernel,
    private readonly auth: Record<string, string> = { 'X-API-ID': ADMIN_HEADERS['x-api-id'], 'X-API-KEY': ADMIN_HEADERS['x-api-key'] },
  ) {}

  /** The lazy init of http.ts: GET /api/v1/security/csrf, keep `token` ?? `csrfToken` when 200. */
  async init(): Promise<void> {
    const res = await this.kernel.app.inject({ method: 'GET', url: '/api/v1/security/csrf', headers: { host: 'localhost', ...this.auth } });
    if (res.statusCode === 200) {
      const data = JSON.parse(res.body) as Json;
      this.csrf = (data.token as string | undefined) ?? (data.csrfToken as string | undefined);
    }
  }

  async send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<McpAnswer> {
    const headers: Record<string, string> = { host: 'localhost', ...this.auth, 'X-Request-Id': `mcp${(++requestSeq).toString(16).padStart(9, '0')}` };
    if (method !== 'GET' && this.csrf) headers['Csrf-Token'] = this.csrf;
    const payload = body !== undefined ? JSON.stringify(body) : undefined;
    if (payload) headers['Content-Type'] = 'application/json';
    const res = await this.kernel.app.inject({ method, url: path, headers, ...(payload ? { payload } : {}) });
    let parsed: unknown = null;
    if (res.body) {
      try {
        parsed = JSON.parse(res.body);
      } catch {
        parsed = undefined;
      }
    }
    return { status: res.statusCode, contentType: res.headers['content-type'] as string | undefined, body: parsed, raw: res.body };
  }

  get = (path: string) => this.send('GET', path);
  post = (path: string, body?: unknown) => this.send('POST', path, body);
  put = (path: string, body: unknown) => this.send('PUT', path, body);
  patch = (path: string, body: unknown) => this.send('PATCH', path, body);
  delete = (path: string) => this.send('DELETE', path);
  deleteWithBody = (path: string, body: unknown) => this.send('DELETE', path, body);
}

/** `_scaffold.ts` itemPath: the route template with its one placeholder replaced by the encoded id. */
export const itemPath = (route: string, id: string): string => route.replace(/\{[^}]+\}/, encodeURIComponent(id));

/** normalizeItems of _scaffold.ts: an array, `{items}`, `{}` (none) or one object. */
export function normalizeItems(data: unknown): Json[] {
  if (data === null || typeof data !== 'object') return [];
  if (Array.isArray(data)) return data as Json[];
  const obj = data as Json;
  if ('items' in obj) return Array.isArray(obj.items) ? (obj.items as Json[]) : [];
  if (Object.keys(obj).length === 0) return [];
  return [obj];
}

/** A 2xx answer as HorizonClient takes it: status below 400, a JSON body (exact JSON content type). */
export function expectOk(t: Test, res: McpAnswer, what: string, statuses: number[] = [200, 201]): void {
  t.ok(statuses.includes(res.status), `${what}: answered ${res.status} (expected ${statuses.join(' or ')}): ${res.raw.slice(0, 400)}`);
  if (res.status !== 204) {
    t.equal(res.contentType, 'application/json', `${what}: Content-Type is exactly application/json`);
    t.not(res.body, undefined, `${what}: the body is JSON`);
  }
}

/**
 * An error answer as parseErrorResponse reads it: status >= 400, JSON (exact application/json or
 * application/problem+json), `error` a string code of the family convention with the expected suffix,
 * `message` (or `title`) a non-empty string, `detail` a string when present.
 */
export function expectProblem(t: Test, res: McpAnswer, what: string, expected: { status: number | number[]; suffix: '002' | '003' | '004' | '005' }): Json {
  const statuses = ([] as number[]).concat(expected.status);
  t.ok(statuses.includes(res.status), `${what}: status ${res.status} (expected ${statuses.join(' or ')}): ${res.raw.slice(0, 400)}`);
  t.ok(res.contentType === 'application/json' || res.contentType === 'application/problem+json', `${what}: JSON error content type (${res.contentType})`);
  const body = (res.body ?? {}) as Json;
  const code = typeof body.error === 'object' && body.error !== null ? ((body.error as Json).code ?? (body.error as Json).error) : (body.error ?? body.code);
  t.type(code, 'string', `${what}: error code is a string`);
  t.match(String(code), new RegExp(`^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-${expected.suffix}$`), `${what}: code ${String(code)} ends in -${expected.suffix}`);
  const message = body.message ?? body.title;
  t.ok(typeof message === 'string' && message.length > 0, `${what}: message (or title) is a non-empty string`);
  if (body.detail !== undefined) t.type(body.detail, 'string', `${what}: detail is a string`);
  return body;
}

/**
 * getStripMergePutExplicit of _scaffold.ts (clear_fields unused): GET the item, check it is one object,
 * strip, override, PUT on the collection. Returns the GET answer and the PUT answer.
 */
export async function getStripMergePut(
  t: Test,
  client: McpClient,
  spec: { routeCollection: string; routeItem: string; stripFields: readonly string[] },
  id: string,
  overrides: Json,
): Promise<{ current: Json; sent: Json; res: McpAnswer }> {
  const got = await client.get(itemPath(spec.routeItem, id));
  expectOk(t, got, `GET ${spec.routeItem} before the PUT`, [200]);
  t.ok(got.body !== null && typeof got.body === 'object' && !Array.isArray(got.body), 'the GET before the update answers one object (CONFIG-BAD-GET otherwise)');
  const current = (got.body ?? {}) as Json;
  const sent: Json = {};
  for (const [k, v] of Object.entries(current)) if (!spec.stripFields.includes(k)) sent[k] = v;
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) sent[k] = v;
  const res = await client.put(spec.routeCollection, sent);
  return { current, sent, res };
}
