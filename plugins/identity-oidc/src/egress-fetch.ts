/**
 * openid-client's HTTP (discovery, JWKS, token and userinfo endpoints) through the platform's egress.
 *
 * ctx.http.fetch reaches only the hosts the manifest's `egress` lists, and an OpenID provider's hosts are not
 * known when the plugin ships: they are configured, per instance. So every call goes through
 * ctx.http.fetchConfigured, the platform's path for administrator-configured URLs (as webhooks use it): the URL
 * is checked against the instance's egress policy (https only and public addresses unless the instance says
 * `allowHttp` / `allowPrivateNetworks`; cloud metadata addresses never), the host resolved once and every address
 * checked, the connection pinned to the checked address, no redirect followed, the answer size capped. openid-client
 * v6 takes it as its `customFetch`; `allowInsecureRequests` is set only when the instance allows http, which is
 * how the tests reach a provider on http://127.0.0.1 without any test-only switch in the plugin.
 */
import type { EgressHttpClient, EgressPolicy } from '@certwright/sdk';
import type { CustomFetch } from 'openid-client';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const METHODS = new Set<string>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function bodyOf(body: unknown): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('unsupported request body for the OpenID provider');
}

export function egressFetch(http: EgressHttpClient, policy: Partial<EgressPolicy>): CustomFetch {
  return async (url, options) => {
    const method = (options.method ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw new TypeError(`unsupported method ${method}`);
    const body = bodyOf(options.body);
    const answer = await http.fetchConfigured(
      url,
      { method: method as Method, headers: { ...options.headers }, ...(body !== undefined ? { body } : {}) },
      policy,
    );
    if (answer.truncated) throw new Error(`${new URL(url).origin} answered more than ${policy.maxResponseBytes ?? 'the allowed'} bytes`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) headers.set(name, value);
    return new Response(NULL_BODY.has(answer.status) ? null : answer.body, { status: answer.status, headers });
  };
}
