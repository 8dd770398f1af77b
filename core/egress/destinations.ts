/**
 * Which HTTP proxy carries a destination: each proxy lists host patterns (`example.com`, `*.example.com`,
 * `*`); the most specific matching pattern wins, so an administrator can send everything through a default
 * proxy and carve out one domain (or one host) for another.
 */

/** How specific a pattern is for `host`: -1 when it does not match; exact > longest `*.` suffix > `*`. */
export function patternRank(pattern: string, host: string): number {
  const p = pattern.toLowerCase();
  if (p === '*') return 0;
  if (p.startsWith('*.')) {
    const suffix = p.slice(1); // `.example.com`: the apex itself is not below it
    return host.endsWith(suffix) && host.length > suffix.length ? suffix.length : -1;
  }
  // Above every suffix rank (a host name is at most 253 characters).
  return host === p ? 1_000 : -1;
}

/** The host of a URL as patterns compare it: lower case, IPv6 brackets and a trailing root dot dropped. */
export function destinationHost(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

export interface Destined {
  name: string;
  destinations?: readonly string[];
}

/** The proxy whose patterns match `host` most specifically; equal ranks go to the first name in order. */
export function pickProxy<P extends Destined>(proxies: readonly P[], host: string): P | undefined {
  let best: P | undefined;
  let bestRank = -1;
  for (const proxy of [...proxies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rank = Math.max(-1, ...(proxy.destinations ?? []).map((p) => patternRank(p, host)));
    if (rank > bestRank) {
      best = proxy;
      bestRank = rank;
    }
  }
  return best;
}
