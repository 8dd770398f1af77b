/**
 * HTTP for the ACME client: every request through the context's egress-checked client, so the kernel decides
 * which hosts the plugin may reach and which HTTP proxy carries the call. With `caBundlePem` the bundle is
 * the call's only trust anchor (SDK 1.7 EgressFetchOptions), for an ACME CA under a private root.
 */
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

/** Through the context's egress-checked fetch; `caPem`: trust only these certificates. */
export function fetchTransport(http: EgressHttpClient, timeoutMs: number, caPem?: string): Transport {
  const hasBundle = caPem !== undefined;
  return {
    async send(method, url, headers, body) {
      let res: Response;
      try {
        res = await http.fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) }, hasBundle ? { caPem } : undefined);
      } catch (err) {
        throw networkError(err, url, hasBundle);
      }
      let bytes: Buffer;
      try {
        bytes = Buffer.from(await res.arrayBuffer());
      } catch (err) {
        throw networkError(err, url, hasBundle);
      }
      if (bytes.length > MAX_BODY) throw new TransientError(`${new URL(url).origin} answered more than ${MAX_BODY} bytes`);
      return { status: res.status, header: (n) => res.headers.get(n) ?? undefined, body: bytes };
    },
  };
}
