import { PermanentError, TransientError, type ConfiguredRequest, type ConfiguredResponse } from '@certwright/sdk';
import { proxyFailure } from './failure.js';
import type { ProxyRoute } from './proxy-router.js';

export interface PinnedThroughProxy {
  url: URL;
  /** The destination's host name, as the caller checked it (brackets dropped). */
  host: string;
  /** An address the host resolved to, already checked against the address classes. */
  address: { address: string; family: number };
  request: ConfiguredRequest;
  maxResponseBytes: number;
  signal: AbortSignal;
  timedOut: () => Error;
  route: ProxyRoute;
}

/**
 * An administrator-configured request (fetchConfigured) sent through a proxy to the very address that was
 * checked. The proxy would otherwise resolve the name itself, and could get another answer than the one
 * checked (DNS rebinding, split-horizon DNS): so the CONNECT names the checked IP and port, and the request
 * carries the real name where the destination needs it: the Host header, and for https the TLS server name (undici takes it
 * from the Host header), so the certificate is still verified against the name. Redirects are not followed.
 */
export async function sendPinnedThroughProxy(p: PinnedThroughProxy): Promise<ConfiguredResponse> {
  const { url, route } = p;
  const ip = p.address.family === 6 ? `[${p.address.address}]` : p.address.address;
  const origin = `${url.protocol}//${ip}${url.port ? `:${url.port}` : ''}`;
  const body = p.request.body === undefined ? undefined : typeof p.request.body === 'string' ? Buffer.from(p.request.body, 'utf8') : Buffer.from(p.request.body);
  const headers: Record<string, string> = { ...p.request.headers, host: url.host };
  let answer: Awaited<ReturnType<ProxyRoute['tunnel']['request']>>;
  try {
    // Tunnelled, http too: see ProxyRoute.tunnel.
    answer = await route.tunnel.request({
      origin,
      path: `${url.pathname}${url.search}`,
      method: (p.request.method ?? (body ? 'POST' : 'GET')) as 'GET',
      headers,
      ...(body ? { body } : {}),
      signal: p.signal,
    });
  } catch (err) {
    if (p.signal.aborted) throw p.timedOut();
    const name = (err as Error | undefined)?.name;
    // Invalid header names or values: asking again will not help.
    if (name === 'InvalidArgumentError' && !/\(407\)/.test((err as Error).message)) throw new PermanentError(`invalid request: ${(err as Error).message}`);
    // Error messages name the host only: a webhook URL's path and query are often its credential.
    throw new TransientError(`host ${p.host}: ${proxyFailure(route, err)}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      const room = p.maxResponseBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        truncated = true;
        answer.body.destroy();
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    if (p.signal.aborted) throw p.timedOut();
    throw new TransientError(`host ${p.host}: ${proxyFailure(route, err)}`);
  }
  const answerHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) answerHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status: answer.statusCode, headers: answerHeaders, body: Buffer.concat(chunks).toString('utf8'), truncated };
}
