import type { ProxyRoute } from './proxy-router.js';

/** The deepest message of an undici failure (`fetch failed` says nothing; its cause says why). */
function innermost(err: unknown): { message: string; code?: string } {
  let e = err as { message?: unknown; code?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e?.cause && depth < 4; depth++) e = e.cause as typeof e;
  return { message: typeof e?.message === 'string' ? e.message : String(err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}

/**
 * Why a call through a proxy failed, naming the proxy (never its credential). A refusal is said plainly, as
 * the administrator must act on it: a 407 to a forwarded request, or any answer but 200 to a CONNECT (some
 * proxies, tinyproxy among them, answer a wrong password with 401).
 */
export function proxyFailure(route: Pick<ProxyRoute, 'proxy'>, err: unknown): string {
  const { message, code } = innermost(err);
  const status = /Proxy Authentication Required \(407\)/.test(message) ? 407 : Number(/Proxy response \((\d{3})\) !== 200/.exec(message)?.[1] ?? 0);
  if (status === 407) return `HTTP proxy "${route.proxy}" refused the credentials (407 Proxy Authentication Required)`;
  if (status === 401) return `HTTP proxy "${route.proxy}" refused the credentials (HTTP 401)`;
  if (status) return `HTTP proxy "${route.proxy}" refused the connection (HTTP ${status})`;
  return `through HTTP proxy "${route.proxy}": ${code ?? message}`;
}
