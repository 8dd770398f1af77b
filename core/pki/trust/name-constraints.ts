import { isIP } from 'node:net';
import type { CertificateInfo, SubjectAlternateName } from '../x509/model.js';

type Kind = 'DNSNAME' | 'RFC822NAME' | 'IPADDRESS' | 'URI' | 'DIRECTORYNAME';
const KINDS: readonly Kind[] = ['DNSNAME', 'RFC822NAME', 'IPADDRESS', 'URI', 'DIRECTORYNAME'];
const LABEL: Record<Kind, string> = { DNSNAME: 'DNS name', RFC822NAME: 'email address', IPADDRESS: 'IP address', URI: 'URI', DIRECTORYNAME: 'directory name' };

const fold = (s: string) => s.trim().toLowerCase().replace(/\.$/, '');

/** IPv4 / IPv6 text to bytes; null when it is neither. */
export function ipBytes(text: string): number[] | null {
  const t = text.trim().replace(/^\[|\]$/g, '');
  const family = isIP(t);
  if (family === 4) return t.split('.').map(Number);
  if (family !== 6) return null;
  // Expand "::" and an embedded IPv4 tail into eight 16-bit groups.
  const groups = (part: string | undefined): number[] =>
    !part
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const v4 = g.split('.').map(Number);
          return [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
        });
  const [head, tail] = t.includes('::') ? t.split('::') : [t, undefined];
  const h = groups(head);
  const rest = groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - rest.length).fill(0), ...rest];
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}

/** An iPAddress constraint as "net/prefix" or "net/mask" (either family); null when unreadable. */
function ipRange(text: string): { net: number[]; mask: number[] } | null {
  const [addr, suffix] = text.split('/');
  const net = addr ? ipBytes(addr) : null;
  if (!net || suffix === undefined) return null;
  let mask: number[] | null;
  if (/^\d+$/.test(suffix)) {
    const bits = Number(suffix);
    if (bits > net.length * 8) return null;
    mask = net.map((_, i) => (0xff << (8 - Math.max(0, Math.min(8, bits - i * 8)))) & 0xff);
  } else mask = ipBytes(suffix);
  return mask && mask.length === net.length ? { net, mask } : null;
}

function matches(kind: Kind, name: string, constraint: string): boolean {
  switch (kind) {
    case 'DNSNAME': {
      const n = fold(name);
      const c = fold(constraint);
      if (c === '') return true;
      return c.startsWith('.') ? n.endsWith(c) : n === c || n.endsWith(`.${c}`);
    }
    case 'RFC822NAME': {
      const n = fold(name);
      const c = fold(constraint);
      if (c.includes('@')) return n === c;
      const domain = n.slice(n.lastIndexOf('@') + 1);
      return c.startsWith('.') ? domain.endsWith(c) : domain === c;
    }
    case 'URI': {
      let host: string;
      try {
        host = fold(new URL(name).hostname);
      } catch {
        return false;
      }
      const c = fold(constraint);
      return c.startsWith('.') ? host.endsWith(c) : host === c;
    }
    case 'IPADDRESS': {
      const ip = ipBytes(name);
      const range = ipRange(constraint);
      if (!ip || !range || ip.length !== range.net.length) return false;
      return ip.every((b, i) => (b & range.mask[i]!) === (range.net[i]! & range.mask[i]!));
    }
    case 'DIRECTORYNAME': {
      // RFC 4514 strings print the last RDN first: a subtree is a suffix on an RDN boundary.
      const n = fold(name);
      const c = fold(constraint);
      return n === c || n.endsWith(`,${c}`);
    }
  }
}

/** The names a CA's constraints apply to (RFC 5280 §4.2.1.10): SANs, the subject DN and its emailAddress. */
function namesOf(cert: CertificateInfo): { kind: Kind; value: string }[] {
  const out: { kind: Kind; value: string }[] = [];
  for (const san of cert.subjectAlternateNames) {
    if ((KINDS as readonly string[]).includes(san.sanType)) out.push({ kind: san.sanType as Kind, value: san.value });
  }
  if (cert.dn) out.push({ kind: 'DIRECTORYNAME', value: cert.dn });
  for (const e of cert.dnElements) if (e.type === 'EMAILADDRESS') out.push({ kind: 'RFC822NAME', value: e.value });
  return out;
}

const ofKind = (list: SubjectAlternateName[], kind: Kind) => list.filter((c) => c.sanType === kind).map((c) => c.value);

/**
 * The names of `cert` that break `ca`'s name constraints, as messages. A name of a kind the permitted
 * subtrees list must fall in one of them; no name may fall in an excluded subtree.
 */
export function nameConstraintViolations(cert: CertificateInfo, ca: CertificateInfo): string[] {
  const nc = ca.extensions.nameConstraints;
  if (!nc) return [];
  const out: string[] = [];
  for (const { kind, value } of namesOf(cert)) {
    const permitted = ofKind(nc.permitted, kind);
    const excluded = ofKind(nc.excluded, kind);
    const hit = excluded.find((c) => matches(kind, value, c));
    if (hit !== undefined) out.push(`${LABEL[kind]} "${value}" is in the excluded subtree "${hit}" of "${ca.dn}"`);
    else if (permitted.length > 0 && !permitted.some((c) => matches(kind, value, c))) {
      out.push(`${LABEL[kind]} "${value}" is outside the permitted subtrees of "${ca.dn}" (${permitted.join(', ')})`);
    }
  }
  return out;
}
