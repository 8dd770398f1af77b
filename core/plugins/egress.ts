import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import {
  classifyAddress,
  EgressDeniedError,
  PermanentError,
  TransientError,
  egressPolicyFrom,
  type ConfiguredRequest,
  type ConfiguredResponse,
  type EgressHttpClient,
  type EgressPolicy,
} from '@certwright/sdk';
import { fetchThrough } from '../egress/fetch-through.js';
import { fetchTrusting } from '../egress/fetch-trusting.js';
import { sendPinnedThroughProxy } from '../egress/pinned-request.js';
import type { ProxyRouter } from '../egress/proxy-router.js';

/** `example.com` matches itself; `*.example.com` matches any name below it (not the apex). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

/**
 * The context HTTP client: fetch, refused before any connection for hosts the manifest does not name.
 * With a router, both calls go through the HTTP proxy whose destinations match (tenant `default`: plugin
 * contexts are platform-wide), so plugins reach the network as the administrator configured it without
 * knowing about proxies.
 */
export function egressClient(pluginId: string, allowed: readonly string[], router?: ProxyRouter): EgressHttpClient {
  return {
    async fetch(url, init, options) {
      const target = new URL(url);
      if (!hostAllowed(target.hostname, allowed)) {
        throw new EgressDeniedError(`plugin ${pluginId} may not reach ${target.hostname} (not in its manifest's egress)`);
      }
      const caPem = options?.caPem;
      const route = await router?.routeFor(target, 'default', caPem);
      if (route) return fetchThrough(route, target, init);
      return caPem ? fetchTrusting(caPem, target, init) : fetch(target, init);
    },
    fetchConfigured: (url, request, policy) => fetchConfigured(url, request, egressPolicyFrom(policy), systemResolve, router),
  };
}

// Address classes: the SDK's classifyAddress (plugins that connect by address, such as ACME validation, use it too).
export { classifyAddress };

// ---- The checked request ----

export interface ResolvedAddress {
  address: string;
  family: number;
}
export type Resolve = (host: string) => Promise<ResolvedAddress[]>;

const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The checks that need no network: scheme, credentials, host pattern. Answers the URL or throws EgressDeniedError. */
export function checkConfiguredUrl(raw: string, policy: EgressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EgressDeniedError('the destination is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new EgressDeniedError(
      url.protocol === 'http:' ? `http://${url.hostname} refused: this channel's egress policy requires https (allowHttp is false)` : `scheme ${url.protocol} refused: only https${policy.allowHttp ? ' and http' : ''}`,
    );
  }
  if (url.username || url.password) throw new EgressDeniedError('credentials in the URL are refused; put them in headers');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowedHosts.includes('*') && !hostAllowed(host, policy.allowedHosts)) {
    throw new EgressDeniedError(`host ${host} refused: not in this channel's allowedHosts`);
  }
  return url;
}

/** Resolves the host once and refuses it when any address it resolves to is not allowed. */
export async function resolveChecked(host: string, policy: EgressPolicy, resolve: Resolve = systemResolve): Promise<ResolvedAddress[]> {
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new TransientError(`host ${host} did not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (!addresses.length) throw new TransientError(`host ${host} did not resolve`);
  }
  for (const { address } of addresses) {
    const found = classifyAddress(address);
    if (found && (found.always || !policy.allowPrivateNetworks)) {
      const why = found.always ? 'never reachable from channels' : "private networks are not allowed by this channel's egress policy";
      throw new EgressDeniedError(`host ${host} refused: ${address} is ${found.label}; ${why}`);
    }
  }
  return addresses;
}

/**
 * A lookup that answers only the already-checked addresses, so the socket cannot go elsewhere (no DNS
 * rebinding between the check and the connection). With `all` (Happy Eyeballs) it gets every checked address.
 */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  const first = addresses[0]!;
  return (_host, options, callback) => {
    if (options.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, addresses.map(({ address, family }) => ({ address, family })));
    else callback(null, first.address, first.family);
  };
}

/**
 * fetchConfigured for the context HTTP client. The deadline covers resolution, connection and the answer.
 * Error messages name the host only: a webhook URL's path and query are often its credential.
 */
export async function fetchConfigured(
  raw: string,
  request: ConfiguredRequest,
  policy: EgressPolicy,
  resolve: Resolve = systemResolve,
  router?: ProxyRouter,
): Promise<ConfiguredResponse> {
  const url = checkConfiguredUrl(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), policy.timeoutMs);
  const timedOut = () => new TransientError(`host ${host}: no answer within ${policy.timeoutMs} ms`);
  try {
    const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(timedOut()), { once: true }));
    aborted.catch(() => undefined);
    const addresses = await Promise.race([resolveChecked(host, policy, resolve), aborted]);
    // Through a proxy, the address classes are still checked here, on this node's resolution, before any
    // connection; the proxy is then told to connect to the checked address itself, not to the name (which
    // it would resolve again, possibly elsewhere): see sendPinnedThroughProxy.
    const route = await Promise.race([router?.routeFor(url), aborted]);
    if (route) {
      return await sendPinnedThroughProxy({ url, host, address: addresses[0]!, request, maxResponseBytes: policy.maxResponseBytes, signal: controller.signal, timedOut, route });
    }
    return await send(url, host, addresses, request, policy, controller.signal, timedOut);
  } finally {
    clearTimeout(timer);
  }
}

function send(
  url: URL,
  host: string,
  pinned: ResolvedAddress[],
  request: ConfiguredRequest,
  policy: EgressPolicy,
  signal: AbortSignal,
  timedOut: () => Error,
): Promise<ConfiguredResponse> {
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      reject(signal.aborted ? timedOut() : err);
    };
    const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : Buffer.from(request.body);
    const headers: Record<string, string> = { ...request.headers };
    if (body) headers['content-length'] = String(body.length);
    let req: http.ClientRequest;
    try {
      req = (url.protocol === 'https:' ? https : http).request({
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: request.method ?? (body ? 'POST' : 'GET'),
        headers,
        // A fresh connection each time: a pooled socket could be one opened to another address.
        agent: false,
        lookup: pinnedLookup(pinned),
        signal,
      });
    } catch (err) {
      // Invalid header names or values: asking again will not help.
      return fail(new PermanentError(`invalid request: ${(err as Error).message}`));
    }
    req.on('error', (err: NodeJS.ErrnoException) => fail(new TransientError(`host ${host}: ${err.code ?? err.message}`)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        const answerHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        resolvePromise({ status: res.statusCode ?? 0, headers: answerHeaders, body: Buffer.concat(chunks).toString('utf8'), truncated });
      };
      res.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = policy.maxResponseBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          finish();
          res.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', finish);
      res.on('error', (err: NodeJS.ErrnoException) => fail(new TransientError(`host ${host}: ${err.code ?? err.message}`)));
    });
    req.end(body);
  });
}
