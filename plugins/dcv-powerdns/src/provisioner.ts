/**
 * The `powerdns` provisioner: TXT records through the PowerDNS Authoritative HTTP API.
 *
 * The API replaces whole RRsets (PATCH …/zones/{zone} with changetype REPLACE or DELETE), so an additive write is
 * a read-modify-write: read the RRset, add or remove the one value, write the union back (DELETE when nothing is
 * left). Two writers of one name at once could each read the old set and the later write would drop the other's
 * value. Within this process a per-name lock serialises them; across nodes (or other tools writing the zone)
 * every write is read back, and when the value it meant to add is missing (or the one it removed is back) the
 * whole read-modify-write runs again, a few times. A writer that lost its value to a concurrent write thus puts
 * it back; the kernel's per-domain lock keeps such races rare in the first place.
 */
import { ConfigurationError, PermanentError, TransientError, type DcvProvisioner, type DnsRecord, type PluginContext } from '@certwright/sdk';
import { txtContent, txtText } from './txt.js';

export interface PowerDnsConfig {
  url: string;
  serverId?: string;
  apiKeyCredential: string;
  ttl?: number;
  allowHttp?: boolean;
  allowPrivateNetworks?: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  propagationTimeoutSeconds?: number;
  propagationIntervalSeconds?: number;
}

interface PdnsRecord {
  content: string;
  disabled?: boolean;
}
interface PdnsRrset {
  name: string;
  type: string;
  ttl?: number;
  records: PdnsRecord[];
}

const ATTEMPTS = 4;
const trimDot = (name: string): string => name.replace(/\.$/, '').toLowerCase();
const absolute = (name: string): string => `${trimDot(name)}.`;

/** One promise chain per key: the next write of a name starts when the previous one has settled. */
const locks = new Map<string, Promise<unknown>>();
async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  locks.set(key, tail);
  try {
    return await run;
  } finally {
    if (locks.get(key) === tail) locks.delete(key);
  }
}

export function powerDnsProvisioner(ctx: PluginContext, instanceName: string, config: PowerDnsConfig): DcvProvisioner {
  const base = config.url.replace(/\/+$/, '');
  const serverId = config.serverId ?? 'localhost';
  const log = ctx.logger.child({ provisioner: instanceName });
  const policy = {
    allowedHosts: [new URL(base).hostname.replace(/^\[(.*)\]$/, '$1')],
    allowHttp: config.allowHttp ?? false,
    allowPrivateNetworks: config.allowPrivateNetworks ?? false,
    timeoutMs: config.timeoutMs ?? 10_000,
    maxResponseBytes: config.maxResponseBytes ?? 16 * 1024 * 1024,
  };

  async function apiKey(): Promise<string> {
    try {
      const secret = (await ctx.credentials.resolve(config.apiKeyCredential, { kind: 'raw', target: 'dcv' })).secret;
      if (!secret) throw new ConfigurationError(`credential "${config.apiKeyCredential}" holds no secret (the PowerDNS API key)`);
      return secret;
    } catch (err) {
      if (err instanceof PermanentError && !(err instanceof ConfigurationError)) throw new ConfigurationError(`PowerDNS API key: ${err.message}`, { cause: err });
      throw err;
    }
  }

  async function call(method: 'GET' | 'PATCH', path: string, zone: string | null, body?: unknown): Promise<unknown> {
    const url = `${base}/api/v1/servers/${encodeURIComponent(serverId)}${path}`;
    const headers: Record<string, string> = { 'x-api-key': await apiKey(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await ctx.http.fetchConfigured(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }, policy);
    let detail = answer.body.slice(0, 300);
    try {
      const parsed = JSON.parse(answer.body) as { error?: string };
      if (typeof parsed.error === 'string') detail = parsed.error;
    } catch {
      /* not JSON: keep the text */
    }
    if (answer.status === 401 || answer.status === 403) {
      throw new ConfigurationError(`the PowerDNS API at ${base} refused the API key of credential "${config.apiKeyCredential}" (HTTP ${answer.status}); nothing was written`);
    }
    if (answer.status === 404) {
      throw new PermanentError(
        zone ? `the PowerDNS server "${serverId}" at ${base} has no zone ${zone} (HTTP 404: ${detail})` : `the PowerDNS API at ${base} has no server "${serverId}" (HTTP 404: ${detail})`,
      );
    }
    if (answer.status === 422 || answer.status === 400) {
      throw new PermanentError(`the PowerDNS API at ${base} rejected the change${zone ? ` of zone ${zone}` : ''} (HTTP ${answer.status}): ${detail}`);
    }
    if (answer.status >= 500 || answer.status === 429) throw new TransientError(`the PowerDNS API at ${base} failed (HTTP ${answer.status}): ${detail}`);
    if (answer.status >= 300) throw new PermanentError(`the PowerDNS API at ${base} answered HTTP ${answer.status}: ${detail}`);
    if (answer.truncated) throw new ConfigurationError(`the PowerDNS API at ${base} answered more than ${policy.maxResponseBytes} bytes: raise maxResponseBytes`);
    if (answer.status === 204 || answer.body === '') return null;
    try {
      return JSON.parse(answer.body) as unknown;
    } catch {
      throw new PermanentError(`the PowerDNS API at ${base} answered something that is not JSON (HTTP ${answer.status})`);
    }
  }

  const zonePath = (zone: string) => `/zones/${encodeURIComponent(absolute(zone))}`;

  /** The RRset of `name`/`type` in `zone` (asking PowerDNS ≥ 4.8 to send only that RRset; older ones send the zone). */
  async function readRrset(zone: string, name: string, type: string): Promise<PdnsRrset | null> {
    const query = `?rrset_name=${encodeURIComponent(absolute(name))}&rrset_type=${type}`;
    const found = (await call('GET', `${zonePath(zone)}${query}`, zone)) as { rrsets?: PdnsRrset[] } | null;
    return found?.rrsets?.find((r) => trimDot(r.name) === name && r.type === type) ?? null;
  }

  async function findZone(fqdn: string): Promise<string | null> {
    const zones = ((await call('GET', '/zones', null)) as { name: string }[] | null) ?? [];
    const name = trimDot(fqdn);
    const matches = zones.map((z) => trimDot(z.name)).filter((z) => name === z || name.endsWith(`.${z}`));
    return matches.sort((a, b) => b.length - a.length)[0] ?? null;
  }

  async function change(op: 'add' | 'remove', record: DnsRecord): Promise<void> {
    const name = trimDot(record.fqdn);
    const zone = trimDot(record.zone ?? (await findZone(name)) ?? '');
    if (!zone) throw new PermanentError(`the PowerDNS server "${serverId}" at ${base} has no zone holding ${name}`);
    if (name !== zone && !name.endsWith(`.${zone}`)) throw new PermanentError(`${name} is not in the zone ${zone}`);
    const type = record.type;
    const wanted = type === 'TXT' ? txtContent(record.value) : absolute(record.value);
    const same = (content: string) => (type === 'TXT' ? txtText(content) === record.value : trimDot(content) === trimDot(record.value));

    await withLock(`${zone}|${name}|${type}`, async () => {
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const current = await readRrset(zone, name, type);
        const records = current?.records ?? [];
        const present = records.some((r) => same(r.content));
        if (op === 'add' ? present : !present) return; // already as wanted: idempotent, nothing written
        const next =
          type === 'CNAME'
            ? op === 'add'
              ? [{ content: wanted, disabled: false }]
              : []
            : op === 'add'
              ? [...records.map((r) => ({ content: r.content, disabled: r.disabled ?? false })), { content: wanted, disabled: false }]
              : records.filter((r) => !same(r.content)).map((r) => ({ content: r.content, disabled: r.disabled ?? false }));
        const rrset =
          next.length > 0
            ? { name: absolute(name), type, ttl: current?.ttl ?? record.ttl ?? config.ttl ?? 60, changetype: 'REPLACE', records: next }
            : { name: absolute(name), type, changetype: 'DELETE' };
        await call('PATCH', zonePath(zone), zone, { rrsets: [rrset] });
        // Read back: a concurrent writer (another node, another tool) may have replaced the RRset meanwhile.
        const after = (await readRrset(zone, name, type))?.records ?? [];
        const done = op === 'add' ? after.some((r) => same(r.content)) : !after.some((r) => same(r.content));
        if (done) {
          log.debug({ op, fqdn: name, zone, attempt }, 'PowerDNS RRset written');
          return;
        }
        log.warn({ op, fqdn: name, zone, attempt }, 'PowerDNS RRset changed by a concurrent writer; writing again');
      }
      throw new TransientError(`the ${type} RRset of ${name} in zone ${zone} kept changing under concurrent writers (${ATTEMPTS} attempts)`);
    });
  }

  return {
    present: (record) => change('add', record),
    cleanUp: (record) => change('remove', record),
    propagation: () => ({ timeoutSeconds: config.propagationTimeoutSeconds ?? 120, intervalSeconds: config.propagationIntervalSeconds ?? 2 }),
    findZone,
  };
}
