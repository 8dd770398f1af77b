import { BlockList, isIP } from 'node:net';

/** An IPv4 address written as IPv4-mapped IPv6 (`::ffff:127.0.0.1`, what dual-stack sockets report) as plain IPv4. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** The trusted proxies of an instance: addresses and CIDR blocks, IPv4 or IPv6. Throws on an entry that is neither. */
export function proxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address);
    if (family === 0) throw new Error(`trustedProxies: "${entry}" is not an address or CIDR block`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else {
      const prefix = Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`trustedProxies: "${entry}" has a bad prefix length`);
      list.addSubnet(address, prefix, type);
    }
  }
  return list;
}

export function isTrusted(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  const plain = plainAddress(address);
  const family = isIP(plain);
  if (family === 0) return false;
  return list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** The PEM of a forwarded header: URL-encoded (nginx's $ssl_client_escaped_cert), or already plain; null when empty. */
export function forwardedPem(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === '(null)') return null;
  let pem = trimmed;
  if (/%[0-9A-Fa-f]{2}/.test(pem)) {
    try {
      pem = decodeURIComponent(pem);
    } catch {
      return null;
    }
  }
  // Some proxies fold the PEM onto one line with spaces (Apache, older nginx $ssl_client_cert with tabs).
  const match = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
  if (!match) return null;
  const body = match[1]!.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}
