import { CAPABILITIES, type Capability } from '@certwright/sdk';
import type { CertwrightConfig, EndpointEntry } from '../config/index.js';

/**
 * Which host may reach which capability (spec "Endpoint groups"). Built from `certwright.endpoints`
 * when set, else from the basic `allowedHosts` list (every capability).
 */
const NONE: ReadonlySet<Capability> = new Set();
/**
 * The memo of raw Host values: at most RAW_HOST_MEMO of them (then it starts again), each at most
 * RAW_HOST_MEMO_MAX_LENGTH characters (a DNS name has at most 253, plus a port). A Host header may run to the
 * header size limit (16 KB): 1,024 of those kept 16 MB for values no client sends twice (issue 24).
 */
export const RAW_HOST_MEMO = 1024;
export const RAW_HOST_MEMO_MAX_LENGTH = 270;

export class HostPolicy {
  private readonly byHost: Map<string, ReadonlySet<Capability>>;
  private readonly byRawHost = new Map<string, ReadonlySet<Capability>>();

  constructor(readonly entries: readonly EndpointEntry[]) {
    this.byHost = new Map();
    for (const entry of entries) {
      const host = normaliseHost(entry.host);
      const caps = new Set<Capability>(this.byHost.get(host) ?? []);
      for (const cap of CAPABILITIES) if (entry[cap]) caps.add(cap);
      this.byHost.set(host, caps);
    }
  }

  static fromConfig(config: Pick<CertwrightConfig, 'allowedHosts' | 'certwright'>): HostPolicy {
    if (config.certwright.endpoints !== null) {
      return new HostPolicy(config.certwright.endpoints.map((e) => withDefaults(e)));
    }
    return new HostPolicy(config.allowedHosts.map((host) => allCapabilities(host)));
  }

  allows(host: string, capability: Capability): boolean {
    return this.byHost.get(host)?.has(capability) ?? false;
  }

  /** True when the host is allowed any of the capabilities. */
  allowsAny(host: string, capabilities: readonly Capability[]): boolean {
    return this.anyOf(this.byHost.get(host), capabilities);
  }

  /**
   * The per-request form: takes the raw Host header value. Clients send few distinct values, so their
   * normalised lookups are memoised (bounded, so a flood of junk hosts cannot grow it without limit).
   */
  allowsAnyOnHost(rawHost: string | undefined, capabilities: readonly Capability[]): boolean {
    const key = rawHost ?? '';
    let caps = this.byRawHost.get(key);
    if (caps === undefined) {
      caps = this.byHost.get(normaliseHost(key)) ?? NONE;
      if (key.length <= RAW_HOST_MEMO_MAX_LENGTH) {
        if (this.byRawHost.size >= RAW_HOST_MEMO) this.byRawHost.clear();
        this.byRawHost.set(key, caps);
      }
    }
    return this.anyOf(caps, capabilities);
  }

  /** Raw Host values memoised now (tests of the bound). */
  get memoSize(): number {
    return this.byRawHost.size;
  }

  private anyOf(caps: ReadonlySet<Capability> | undefined, capabilities: readonly Capability[]): boolean {
    if (!caps) return false;
    for (const cap of capabilities) if (caps.has(cap)) return true;
    return false;
  }
}

function allCapabilities(host: string): EndpointEntry {
  const entry = { host } as EndpointEntry;
  for (const cap of CAPABILITIES) entry[cap] = true;
  return entry;
}

function withDefaults(partial: Partial<EndpointEntry> & { host: string }): EndpointEntry {
  const entry = { host: partial.host } as EndpointEntry;
  for (const cap of CAPABILITIES) entry[cap] = partial[cap] === true;
  return entry;
}

/**
 * The host name of a Host header or a configured host: lower case, no port, no IPv6 brackets, no
 * trailing dot. `[::1]:9000` → `::1`, `Example.COM.:443` → `example.com`.
 */
export function normaliseHost(value: string | undefined): string {
  if (!value) return '';
  let host = value.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end > 0 ? host.slice(1, end) : host;
  } else {
    const colon = host.indexOf(':');
    // A single colon is a port separator; several mean a bare IPv6 address.
    if (colon !== -1 && host.indexOf(':', colon + 1) === -1) host = host.slice(0, colon);
  }
  return host.endsWith('.') ? host.slice(0, -1) : host;
}
