import { fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { proxyFailure } from './failure.js';
import type { ProxyRoute } from './proxy-router.js';

/**
 * fetch through a proxy. Node 20's global fetch takes a `dispatcher` only from its own bundled undici, so
 * undici's fetch (the installed version, the one ProxyAgent comes from) makes the call. Failures keep
 * fetch's shape (a TypeError whose cause says why, aborts and timeouts untouched) so callers read them as
 * before; the message names the proxy.
 */
export async function fetchThrough(route: ProxyRoute, url: URL | string, init: RequestInit = {}): Promise<Response> {
  try {
    // The caller's init may carry its own dispatcher: the route's replaces it (it would bypass the proxy).
    const response = await undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher: route.dispatcher });
    // Both implement the same Fetch Response; undici's own class is what callers get here.
    return response as unknown as Response;
  } catch (err) {
    const name = (err as Error | undefined)?.name;
    if (name === 'AbortError' || name === 'TimeoutError') throw err;
    throw new TypeError(`fetch failed: ${proxyFailure(route, err)}`, { cause: (err as Error | undefined)?.cause ?? err });
  }
}
