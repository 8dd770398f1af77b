/**
 * What a destination address is when it is not a public unicast address: cloud metadata, unspecified and
 * multicast addresses (refused always), loopback, private, link-local, CGNAT and unique-local ones (refused
 * unless private networks are allowed), looking through IPv4 carried in IPv6. Used by the kernel's egress for
 * administrator-configured URLs and by plugins that connect to addresses they resolve themselves (since SDK 1.8).
 */
import { BlockList, isIP } from 'node:net';


type Family = 'ipv4' | 'ipv6';
interface AddressClass {
  label: string;
  /** Refused even when the policy allows private networks. */
  always: boolean;
  list: BlockList;
}

function addressClass(label: string, always: boolean, subnets: [string, number, Family][]): AddressClass {
  const list = new BlockList();
  for (const [net, prefix, family] of subnets) list.addSubnet(net, prefix, family);
  return { label, always, list };
}

// Order matters: the metadata hosts sit inside the link-local, CGNAT and unique-local ranges.
const ADDRESS_CLASSES: AddressClass[] = [
  addressClass('a cloud metadata address', true, [
    ['169.254.169.254', 32, 'ipv4'],
    ['169.254.170.2', 32, 'ipv4'],
    ['100.100.100.200', 32, 'ipv4'],
    ['fd00:ec2::254', 128, 'ipv6'],
  ]),
  addressClass('an unspecified address', true, [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ]),
  addressClass('a multicast or reserved address', true, [
    ['224.0.0.0', 4, 'ipv4'],
    ['240.0.0.0', 4, 'ipv4'],
    ['ff00::', 8, 'ipv6'],
  ]),
  addressClass('a loopback address', false, [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ]),
  addressClass('a private address', false, [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['192.0.0.0', 24, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'],
    ['fec0::', 10, 'ipv6'],
  ]),
  addressClass('a link-local address', false, [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ]),
  addressClass('a carrier-grade NAT address', false, [['100.64.0.0', 10, 'ipv4']]),
  addressClass('a unique-local address', false, [['fc00::', 7, 'ipv6']]),
];

/** The 16 bytes of an IPv6 address (zone id dropped, a trailing dotted quad allowed). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((g) => {
    const v = parseInt(g || '0', 16);
    return [v >> 8, v & 0xff];
  });
}

/** IPv4 carried inside an IPv6 address (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.slice(12).join('.');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.slice(12).join('.');
  if (b[0] === 0x20 && b[1] === 0x02) return b.slice(2, 6).join('.');
  return null;
}

/** What a destination address is, when it is not a public unicast address. */
export function classifyAddress(address: string): { label: string; always: boolean } | null {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const version = isIP(bare);
  if (version === 0) return { label: 'not an IP address', always: true };
  if (version === 6) {
    const inner = embeddedIpv4(bare);
    if (inner) {
      const found = classifyAddress(inner);
      return found ? { label: `${found.label} (inside the IPv6 address)`, always: found.always } : null;
    }
  }
  const family: Family = version === 4 ? 'ipv4' : 'ipv6';
  const hit = ADDRESS_CLASSES.find((c) => c.list.check(bare, family));
  return hit ? { label: hit.label, always: hit.always } : null;
}

