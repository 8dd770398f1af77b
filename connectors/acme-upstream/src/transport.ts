/**
 * HTTP for the ACME client. Without a CA bundle every request goes through the context's egress-checked
 * client. With `caBundlePem` it cannot: the SDK's `EgressHttpClient.fetch(url, RequestInit)` has no way to
 * carry a trust anchor. Then the request is made with node:https trusting only the bundle, after asking the
 * same egress client about the host (with an already-aborted signal, so it answers without connecting):
 * the kernel stays the one that decides which hosts the plugin may reach.
 */
import { request as httpsRequest } from 'node:https';
import { ConfigurationError, TransientError, type EgressHttpClient } from '@certwright/sdk';

export interface HttpResponse {
  status: number;
  header(name: string): string | undefined;
  body: Buffer;
}

export interface Transport {
  send(method: 'GET' | 'HEAD' | 'POST', url: string, headers: Record<string, string>, body?: string): Promise<HttpResponse>;
}

const MAX_BODY = 4 * 1024 * 1024;

/** Codes of TLS verification failures: the server is reachable but not trusted, which retrying will not fix. */
const TLS_TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function codeOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

/** A failure below HTTP as a typed error: TLS trust → configuration, everything else → transient. */
export function networkError(err: unknown, url: string, hasBundle: boolean): Error {
  if (err instanceof ConfigurationError || err instanceof TransientError) return err;
  const origin = new URL(url).origin;
  const name = (err as Error)?.name;
  if (name === 'TimeoutError') return new TransientError(`${origin} did not answer in time`);
  const code = codeOf(err);
  if (code && TLS_TRUST_CODES.has(code)) {
    const hint = hasBundle ? 'the configured caBundlePem does not vouch for it' : 'set caBundlePem if the ACME server uses a private CA';
    return new ConfigurationError(`the TLS certificate of ${origin} is not trusted (${code}): ${hint}`);
  }
  return new TransientError(`cannot reach ${origin}: ${code ?? (err as Error)?.message ?? String(err)}`);
}

/** Through the context's egress-checked fetch. */
export function fetchTransport(http: EgressHttpClient, timeoutMs: number): Transport {
  return {
    async send(method, url, headers, body) {
      let res: Response;
      try {
        res = await http.fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        throw networkError(err, url, false);
      }
      let bytes: Buffer;
      try {
        bytes = Buffer.from(await res.arrayBuffer());
      } catch (err) {
        throw networkError(err, url, false);
      }
      if (bytes.length > MAX_BODY) throw new TransientError(`${new URL(url).origin} answered more than ${MAX_BODY} bytes`);
      return { status: res.status, header: (n) => res.headers.get(n) ?? undefined, body: bytes };
    },
  };
}

/** Asks the kernel's egress gate about `url` without opening a connection. */
async function egressGate(http: EgressHttpClient, url: string): Promise<void> {
  try {
    const res = await http.fetch(url, { method: 'HEAD', signal: AbortSignal.abort() });
    await res.body?.cancel();
  } catch (err) {
    if (err instanceof ConfigurationError) throw err; // EgressDeniedError
    // An AbortError: the host is allowed (the request itself was never sent).
  }
}

/** node:https trusting only `caPem`, each request cleared by the egress gate first. */
export function bundleTransport(http: EgressHttpClient, caPem: string, timeoutMs: number): Transport {
  return {
    async send(method, url, headers, body) {
      await egressGate(http, url);
      return new Promise<HttpResponse>((resolve, reject) => {
        const fail = (err: unknown) => reject(networkError(err, url, true));
        const req = httpsRequest(url, { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, ca: caPem, timeout: timeoutMs, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY) {
              req.destroy(new TransientError(`${new URL(url).origin} answered more than ${MAX_BODY} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', fail);
          res.on('end', () => {
            const h = res.headers;
            resolve({
              status: res.statusCode ?? 0,
              header: (n) => {
                const v = h[n.toLowerCase()];
                return Array.isArray(v) ? v.join(', ') : v;
              },
              body: Buffer.concat(chunks),
            });
          });
        });
        req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })));
        req.on('error', fail);
        req.end(body);
      });
    },
  };
}
