/**
 * The three validation methods (RFC 8555 §8.3 http-01, §8.4 dns-01, RFC 8737 tls-alpn-01). Each answers
 * valid, or a problem that is final (a wrong answer) or retryable (the identifier could not be reached).
 * Addresses come from the configured resolvers (tests point them at a loopback BIND9) or the system's.
 */
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { Resolver } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { classifyAddress } from '@certwright/sdk';
import { checkCaa } from './caa.js';
import { problemOf, type ProblemDocument } from './problems.js';
import type { Identifier } from './store.js';

export interface ValidationSettings {
  allowPrivateNetworks: boolean;
  httpPort: number;
  tlsAlpnPort: number;
  dnsServers: string[];
  timeoutMs: number;
}

export type ValidationResult = { valid: true } | { valid: false; retryable: boolean; error: ProblemDocument };

const fail = (retryable: boolean, type: Parameters<typeof problemOf>[0], detail: string): ValidationResult => ({ valid: false, retryable, error: problemOf(type, detail) });

/** base64url(SHA-256(key authorization)): the dns-01 TXT value and the tls-alpn-01 extension's digest. */
export const digestOf = (keyAuthorization: string): Buffer => createHash('sha256').update(keyAuthorization).digest();

const ACME_IDENTIFIER_OID = '1.3.6.1.5.5.7.1.31';

/** An identifier whose every address is one validation must not connect to: final, not retried. */
class RefusedAddress extends Error {}

export class Validator {
  private readonly resolver: Resolver | null;

  constructor(private readonly settings: ValidationSettings) {
    if (settings.dnsServers.length) {
      this.resolver = new Resolver({ timeout: Math.min(settings.timeoutMs, 5000), tries: 2 });
      this.resolver.setServers(settings.dnsServers);
    } else this.resolver = null;
  }

  /** CAA (RFC 8659) of a DNS identifier for the CA identities; null when issuance is authorized. */
  async caa(identifier: Identifier, wildcard: boolean, identities: readonly string[]): Promise<ProblemDocument | null> {
    if (identifier.type !== 'dns') return null;
    return checkCaa(this.resolver ?? new Resolver({ timeout: 5000, tries: 2 }), identifier.value, wildcard, identities);
  }

  async validate(type: string, identifier: Identifier, token: string, keyAuthorization: string): Promise<ValidationResult> {
    try {
      if (type === 'http-01') return await this.http01(identifier, token, keyAuthorization);
      if (type === 'dns-01') return await this.dns01(identifier, keyAuthorization);
      if (type === 'tls-alpn-01') return await this.tlsAlpn01(identifier, keyAuthorization);
      return fail(false, 'malformed', `Unknown challenge type ${type}`);
    } catch (err) {
      if (err instanceof RefusedAddress) return fail(false, 'rejectedIdentifier', err.message);
      return fail(true, 'connection', `${type} for ${identifier.value}: ${(err as Error).message}`);
    }
  }

  /**
   * Addresses of a name: the configured resolvers, else the system's lookup (hosts file included); only those
   * the validation may connect to (classifyAddress: never cloud metadata, private ones when allowed).
   */
  async addressesOf(identifier: Identifier): Promise<string[]> {
    let found: string[];
    if (identifier.type === 'ip') found = [identifier.value];
    else if (this.resolver) {
      const v4 = await this.resolver.resolve4(identifier.value).catch(() => [] as string[]);
      const v6 = v4.length ? [] : await this.resolver.resolve6(identifier.value).catch(() => [] as string[]);
      found = [...v4, ...v6];
    } else found = (await lookup(identifier.value, { all: true }).catch(() => [])).map((a) => a.address);
    const usable = found.filter((a) => {
      const kind = classifyAddress(a);
      return kind === null || (!kind.always && this.settings.allowPrivateNetworks);
    });
    if (found.length && !usable.length) throw new RefusedAddress(`${identifier.value} resolves only to addresses validation does not connect to (${found.map((a) => classifyAddress(a)?.label ?? a).join(', ')})`);
    return usable;
  }

  private async http01(identifier: Identifier, token: string, keyAuthorization: string): Promise<ValidationResult> {
    const addresses = await this.addressesOf(identifier);
    if (!addresses.length) return fail(true, 'dns', `No address for ${identifier.value}`);
    const hostHeader = isIP(identifier.value) === 6 ? `[${identifier.value}]` : identifier.value;
    const path = `/.well-known/acme-challenge/${token}`;
    const answer = await this.get(addresses[0]!, hostHeader, path);
    if (answer.status !== 200) return fail(false, 'unauthorized', `http-01: ${identifier.value}${path} answered HTTP ${answer.status}`);
    // RFC 8555 §8.3: trailing whitespace is tolerated.
    if (answer.body.trimEnd() !== keyAuthorization) return fail(false, 'incorrectResponse', `http-01: ${identifier.value}${path} answered another key authorization`);
    return { valid: true };
  }

  /** One GET, at most 8 KiB read (a key authorization is under 200 bytes). */
  private get(address: string, host: string, path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: address, port: this.settings.httpPort, path, method: 'GET', headers: { host, 'user-agent': 'Certwright ACME validation' }, timeout: this.settings.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= 8192) chunks.push(chunk);
          else res.destroy();
        });
        res.on('close', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  private async dns01(identifier: Identifier, keyAuthorization: string): Promise<ValidationResult> {
    if (identifier.type !== 'dns') return fail(false, 'malformed', 'dns-01 validates DNS names only');
    const name = `_acme-challenge.${identifier.value}`;
    const expected = digestOf(keyAuthorization).toString('base64url');
    let records: string[][];
    try {
      records = await (this.resolver ?? new Resolver({ timeout: 5000, tries: 2 })).resolveTxt(name);
    } catch (err) {
      // No such name yet (the client may still be publishing it) or no answer: tried again.
      return fail(true, 'dns', `dns-01: no TXT record at ${name} (${(err as { code?: string }).code ?? (err as Error).message})`);
    }
    if (records.some((chunks) => chunks.join('') === expected)) return { valid: true };
    return fail(false, 'incorrectResponse', `dns-01: the TXT records at ${name} hold another value`);
  }

  private async tlsAlpn01(identifier: Identifier, keyAuthorization: string): Promise<ValidationResult> {
    const addresses = await this.addressesOf(identifier);
    if (!addresses.length) return fail(true, 'dns', `No address for ${identifier.value}`);
    const der = await new Promise<{ der: Buffer; alpn: string | false }>((resolve, reject) => {
      const socket = tlsConnect({
        host: addresses[0]!,
        port: this.settings.tlsAlpnPort,
        // SNI is the identifier (an IP identifier uses the reverse name, RFC 8738 §6).
        servername: identifier.type === 'dns' ? identifier.value : undefined,
        ALPNProtocols: ['acme-tls/1'],
        // The certificate is self-signed by design: its content is what is checked.
        rejectUnauthorized: false,
        timeout: this.settings.timeoutMs,
      });
      socket.once('secureConnect', () => {
        const peer = socket.getPeerCertificate();
        const alpn = socket.alpnProtocol;
        socket.end();
        resolve({ der: peer?.raw ?? Buffer.alloc(0), alpn: alpn ?? false });
      });
      socket.once('timeout', () => socket.destroy(new Error('timed out')));
      socket.once('error', reject);
    });
    if (der.alpn !== 'acme-tls/1') return fail(false, 'tls', 'tls-alpn-01: the server did not negotiate acme-tls/1');
    let certificate: pkijs.Certificate;
    try {
      certificate = pkijs.Certificate.fromBER(der.der);
    } catch {
      return fail(false, 'tls', 'tls-alpn-01: the certificate does not parse');
    }
    const extensions = certificate.extensions ?? [];
    const san = extensions.find((e) => e.extnID === '2.5.29.17')?.parsedValue as pkijs.AltName | undefined;
    const names = (san?.altNames ?? []).map((n) => (n.type === 2 ? String(n.value) : n.type === 7 ? ipOf(n.value) : '?'));
    if (names.length !== 1 || names[0]!.toLowerCase() !== identifier.value.toLowerCase()) {
      return fail(false, 'unauthorized', `tls-alpn-01: the certificate must name exactly ${identifier.value} (it names ${names.join(', ') || 'nothing'})`);
    }
    const acme = extensions.find((e) => e.extnID === ACME_IDENTIFIER_OID);
    if (!acme || !acme.critical) return fail(false, 'unauthorized', 'tls-alpn-01: no critical acmeIdentifier extension');
    const inner = asn1js.fromBER(acme.extnValue.valueBlock.valueHexView);
    const digest = inner.result instanceof asn1js.OctetString ? Buffer.from(inner.result.valueBlock.valueHexView) : null;
    if (!digest || !digest.equals(digestOf(keyAuthorization))) return fail(false, 'incorrectResponse', 'tls-alpn-01: the acmeIdentifier digest is another key authorization');
    return { valid: true };
  }
}

function ipOf(value: unknown): string {
  const bytes = Buffer.from((value as asn1js.OctetString).valueBlock.valueHexView);
  if (bytes.length === 4) return [...bytes].join('.');
  return (bytes.toString('hex').match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}
