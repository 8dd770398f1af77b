import { EgressDeniedError, type EgressHttpClient } from '@certwright/sdk';

/** `example.com` matches itself; `*.example.com` matches any name below it (not the apex). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

/** The context HTTP client: fetch, refused before any connection for hosts the manifest does not name. */
export function egressClient(pluginId: string, allowed: readonly string[]): EgressHttpClient {
  return {
    fetch(url, init) {
      const target = new URL(url);
      if (!hostAllowed(target.hostname, allowed)) {
        return Promise.reject(new EgressDeniedError(`plugin ${pluginId} may not reach ${target.hostname} (not in its manifest's egress)`));
      }
      return fetch(target, init);
    },
  };
}
