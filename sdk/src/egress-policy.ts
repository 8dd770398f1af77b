/**
 * Egress for destinations an administrator types in (webhook and chat URLs): unlike the manifest's fixed
 * `egress` hosts they can be anything, so the kernel checks each one against a policy taken from the plugin
 * instance's configuration before it connects (EgressHttpClient.fetchConfigured).
 */
export interface EgressPolicy {
  /** Host patterns the URL may name: `example.com`, `*.example.com` (names below it), `*` (any host). */
  allowedHosts: string[];
  /** Plain http:// URLs (https only otherwise). */
  allowHttp: boolean;
  /**
   * Destinations that resolve to loopback, private (RFC 1918), link-local, unique-local or CGNAT addresses.
   * Cloud metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200), unspecified and multicast
   * addresses are refused even then.
   */
  allowPrivateNetworks: boolean;
  /** Whole request deadline: DNS, connect, send and reading the answer. */
  timeoutMs: number;
  /** Bytes of the answer read; the rest is dropped (`truncated`). */
  maxResponseBytes: number;
}

/** Safe defaults: any public host, https only, 10 s, 64 KiB of answer. */
export const DEFAULT_EGRESS_POLICY: Readonly<EgressPolicy> = Object.freeze({
  allowedHosts: ['*'],
  allowHttp: false,
  allowPrivateNetworks: false,
  timeoutMs: 10_000,
  maxResponseBytes: 65_536,
});

/** The policy fields of an instance configuration (any missing one at its default). */
export function egressPolicyFrom(config: Partial<EgressPolicy> | Record<string, unknown> | undefined): EgressPolicy {
  const c = (config ?? {}) as Partial<EgressPolicy>;
  return {
    allowedHosts: Array.isArray(c.allowedHosts) ? [...c.allowedHosts] : [...DEFAULT_EGRESS_POLICY.allowedHosts],
    allowHttp: c.allowHttp === true,
    allowPrivateNetworks: c.allowPrivateNetworks === true,
    timeoutMs: typeof c.timeoutMs === 'number' && c.timeoutMs > 0 ? c.timeoutMs : DEFAULT_EGRESS_POLICY.timeoutMs,
    maxResponseBytes: typeof c.maxResponseBytes === 'number' && c.maxResponseBytes > 0 ? c.maxResponseBytes : DEFAULT_EGRESS_POLICY.maxResponseBytes,
  };
}

/** A request to an administrator-configured URL. Redirects are never followed. */
export interface ConfiguredRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** The answer, read whole up to the policy's maxResponseBytes. */
export interface ConfiguredResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
}
