/**
 * The `rfc2136` provisioner: RFC 2136 dynamic updates signed with TSIG. `present` is an UPDATE that adds one
 * TXT record (the protocol adds it to the RRset beside the others, and adding a record that is already there
 * changes nothing), `cleanUp` an UPDATE that deletes exactly that record (class NONE; deleting an absent
 * record changes nothing), so both are idempotent by the protocol itself, with no read-modify-write race.
 */
import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import { ConfigurationError, PermanentError, TransientError, type DcvProvisioner, type DnsRecord, type PluginContext } from '@certwright/sdk';
import { signRequest, verifyAnswer, wireName, type TsigAlgorithm, type TsigKey } from './tsig.js';
import { exchange, type DnsServer } from './transport.js';

export interface Rfc2136Config {
  server: string;
  port?: number;
  keyName: string;
  keyAlgorithm?: TsigAlgorithm;
  keyCredential: string;
  zone?: string;
  ttl?: number;
  timeoutMs?: number;
  propagationTimeoutSeconds?: number;
  propagationIntervalSeconds?: number;
}

const OPCODE_UPDATE = 5 << 11;
const CLASS_NONE = 254;
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];

const trimDot = (name: string): string => name.replace(/\.$/, '').toLowerCase();

/** TXT text as character-strings of at most 255 bytes each (a longer value is split, as resolvers join it back). */
function txtStrings(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length ? out : [Buffer.alloc(0)];
}

function checkName(fqdn: string): string {
  const name = trimDot(fqdn);
  if (!name || name.length > 253 || name.split('.').some((l) => l.length === 0 || Buffer.byteLength(l) > 63)) {
    throw new PermanentError(`"${fqdn}" is not a valid DNS name`);
  }
  return name;
}

/**
 * The UPDATE message (RFC 2136 §2): zone section = the zone's SOA question, no prerequisites, one update RR.
 * dns-packet encodes header, names and RDATA; it has no class NONE (254), so the delete is encoded as class IN
 * and its class and TTL patched in place (the RR's fixed fields follow its uncompressed owner name).
 */
export function updateMessage(id: number, zone: string, op: 'add' | 'delete', record: { name: string; type: 'TXT' | 'CNAME'; value: string; ttl: number }): Buffer {
  const rr =
    record.type === 'TXT'
      ? { name: record.name, type: 'TXT' as const, class: 'IN' as const, ttl: record.ttl, data: txtStrings(record.value) }
      : { name: record.name, type: 'CNAME' as const, class: 'IN' as const, ttl: record.ttl, data: trimDot(record.value) };
  const wire = dnsPacket.encode({ id, type: 'query', flags: OPCODE_UPDATE, questions: [{ name: zone, type: 'SOA', class: 'IN' }], authorities: [rr] });
  if (op === 'delete') {
    const rrStart = 12 + wireName(zone).length + 4;
    const fixed = rrStart + wireName(record.name).length;
    wire.writeUInt16BE(CLASS_NONE, fixed + 2);
    wire.writeUInt32BE(0, fixed + 4);
  }
  return wire;
}

export function rfc2136Provisioner(ctx: PluginContext, instanceName: string, config: Rfc2136Config): DcvProvisioner {
  const server: DnsServer = { host: config.server, port: config.port ?? 53 };
  const where = `${server.host}:${server.port}`;
  const timeoutMs = config.timeoutMs ?? 5000;
  const algorithm = config.keyAlgorithm ?? 'hmac-sha256';
  const log = ctx.logger.child({ provisioner: instanceName });

  /** The key, read from its credential at each use (a rotation applies to the next update). */
  async function tsigKey(): Promise<TsigKey> {
    let secret: string | undefined;
    try {
      secret = (await ctx.credentials.resolve(config.keyCredential, { kind: 'raw', target: 'dcv' })).secret;
    } catch (err) {
      if (err instanceof PermanentError) throw new ConfigurationError(`TSIG key "${config.keyName}": ${err.message}`, { cause: err });
      throw err;
    }
    const bytes = Buffer.from(secret ?? '', 'base64');
    if (!secret || bytes.length === 0 || bytes.toString('base64').replace(/=+$/, '') !== secret.trim().replace(/=+$/, '')) {
      throw new ConfigurationError(`credential "${config.keyCredential}" (TSIG key "${config.keyName}") must hold the key's secret in base64, as in the server's key statement`);
    }
    return { name: config.keyName, algorithm, secret: bytes };
  }

  /** The zone of `fqdn`: the record's, the configured one, or the SOA owner the server names for it. */
  async function zoneOf(record: DnsRecord, name: string): Promise<string> {
    const zone = record.zone ?? config.zone ?? (await findZone(name));
    if (!zone) throw new PermanentError(`the DNS server ${where} serves no zone holding ${name}`);
    return trimDot(zone);
  }

  async function findZone(fqdn: string): Promise<string | null> {
    const query = dnsPacket.encode({ id: randomInt(65536), type: 'query', flags: 0, questions: [{ name: checkName(fqdn), type: 'SOA', class: 'IN' }] });
    const answer = dnsPacket.decode(await exchange(server, query, timeoutMs));
    const soa = [...(answer.answers ?? []), ...(answer.authorities ?? [])].find((rr) => rr.type === 'SOA');
    return soa ? trimDot(soa.name) : null;
  }

  async function update(op: 'add' | 'delete', record: DnsRecord): Promise<void> {
    const name = checkName(record.fqdn);
    const zone = await zoneOf(record, name);
    if (name !== zone && !name.endsWith(`.${zone}`)) throw new PermanentError(`${name} is not in the zone ${zone}`);
    const key = await tsigKey();
    const id = randomInt(65536);
    const message = updateMessage(id, zone, op, { name, type: record.type, value: record.value, ttl: record.ttl ?? config.ttl ?? 60 });
    const { wire, mac } = signRequest(message, key, Math.floor(ctx.clock.now() / 1000));
    const answer = await exchange(server, wire, timeoutMs);
    const rcodeNumber = answer.readUInt16BE(2) & 0x000f;
    const rcode = RCODES[rcodeNumber] ?? `rcode ${rcodeNumber}`;
    const signature = verifyAnswer(answer, mac, key, Math.floor(ctx.clock.now() / 1000));
    const keyText = `TSIG key "${key.name}" (${key.algorithm}, credential "${config.keyCredential}")`;

    if (signature.state === 'error') {
      const hint =
        signature.name === 'BADKEY'
          ? 'the server does not know a key of this name and algorithm'
          : signature.name === 'BADSIG'
            ? "the secret does not match the server's secret for this key"
            : signature.name === 'BADTIME'
              ? "this host's clock and the server's differ by more than 5 minutes"
              : 'the server rejected the signature';
      throw new ConfigurationError(`the DNS server ${where} refused ${keyText}: ${signature.name} (${hint}); nothing was written`);
    }
    if (rcode === 'NOTAUTH' && signature.state === 'unsigned') {
      // A key the server rejects comes back with a TSIG error (BADKEY, BADSIG: above). An unsigned NOTAUTH is what
      // a server answers when it has no such zone at all (Knot: it cannot even pick the zone's keys).
      throw new PermanentError(
        `the DNS server ${where} is not authoritative for the zone ${zone} (NOTAUTH, unsigned answer): point the provisioner at the zone's primary server, or make the server accept ${keyText} for this zone`,
      );
    }
    if (signature.state === 'invalid') {
      throw new ConfigurationError(`the answer of the DNS server ${where} to an update of zone ${zone} carries a TSIG that does not verify with ${keyText}: ${signature.reason}`);
    }
    if (signature.state === 'unsigned') {
      throw new ConfigurationError(`the DNS server ${where} answered the update of zone ${zone} (${rcode}) without a TSIG signature: it cannot be trusted; does the server know ${keyText}?`);
    }
    switch (rcode) {
      case 'NOERROR':
        log.debug({ op, fqdn: name, zone }, 'RFC 2136 update applied');
        return;
      case 'NOTAUTH':
        throw new PermanentError(`the DNS server ${where} is not authoritative for the zone ${zone} (NOTAUTH): point the provisioner at the zone's primary server`);
      case 'NOTZONE':
        throw new PermanentError(`the DNS server ${where} says ${name} is not in the zone ${zone} (NOTZONE)`);
      case 'REFUSED':
        throw new PermanentError(`the DNS server ${where} refused the update of ${name} in zone ${zone} (REFUSED): its update policy does not allow ${keyText} to change this name, or it does not serve the zone`);
      case 'SERVFAIL':
        throw new TransientError(`the DNS server ${where} failed to apply the update of zone ${zone} (SERVFAIL)`);
      default:
        throw new PermanentError(`the DNS server ${where} rejected the update of ${name} in zone ${zone}: ${rcode}`);
    }
  }

  return {
    present: (record) => update('add', record),
    cleanUp: (record) => update('delete', record),
    propagation: () => ({ timeoutSeconds: config.propagationTimeoutSeconds ?? 120, intervalSeconds: config.propagationIntervalSeconds ?? 2 }),
    findZone,
  };
}
