import { fetchThrough } from '../../egress/fetch-through.js';
import type { ProxyRouter } from '../../egress/proxy-router.js';
import { MAX_OBJECT_BYTES } from '../input.js';

export interface FetchLimits {
  /** Whole download, connection included. */
  timeoutMs: number;
  maxBytes: number;
  /**
   * The configured HTTP proxies (tenant `default`: CRL downloads are the platform's own calls). Carried
   * with the limits because they reach every download the same way (the kernel hands them to pkiServices).
   */
  proxies?: Pick<ProxyRouter, 'routeFor'>;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { timeoutMs: 15_000, maxBytes: MAX_OBJECT_BYTES };

/** A failed download, with a message fit for the cache's last error. */
export class FetchError extends Error {
  override name = 'FetchError';
}

/**
 * Downloads a CRL over HTTP(S): bounded in time (the abort covers a server that trickles bytes) and in
 * size (counted while reading, whatever Content-Length claims), redirects followed by fetch's own limit.
 */
export async function fetchCrl(url: string, limits: FetchLimits = DEFAULT_FETCH_LIMITS): Promise<Uint8Array> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new FetchError(`${url}: only http and https distribution points are fetched`);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    const init: RequestInit = { signal, headers: { accept: 'application/pkix-crl, application/x-pkcs7-crl, */*' } };
    const route = await limits.proxies?.routeFor(target);
    response = route ? await fetchThrough(route, target, init) : await fetch(url, init);
  } catch (err) {
    throw new FetchError(`${url}: ${describe(err, limits)}`);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new FetchError(`${url}: HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new FetchError(`${url}: ${declared} bytes, more than the ${limits.maxBytes} accepted`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > limits.maxBytes) throw new FetchError(`${url}: more than the ${limits.maxBytes} bytes accepted`);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof FetchError) {
      await response.body?.cancel().catch(() => undefined);
      throw err;
    }
    throw new FetchError(`${url}: ${describe(err, limits)}`);
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}

function describe(err: unknown, limits: FetchLimits): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no complete answer within ${limits.timeoutMs} ms`;
  // Through a proxy the message itself names the proxy and what it answered (fetch-through.ts).
  if (e.message.startsWith('fetch failed: ')) return e.message.slice('fetch failed: '.length);
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
