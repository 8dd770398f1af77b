import { MAX_OBJECT_BYTES } from '../input.js';

export interface FetchLimits {
  /** Whole download, connection included. */
  timeoutMs: number;
  maxBytes: number;
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
  const protocol = new URL(url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new FetchError(`${url}: only http and https distribution points are fetched`);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { signal, headers: { accept: 'application/pkix-crl, application/x-pkcs7-crl, */*' } });
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
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
