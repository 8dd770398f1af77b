import { Resolver } from 'node:dns/promises';

export interface DnsFactsOptions {
  /** Recursive resolvers (`host` or `host:port`); empty: the system's. */
  resolvers: readonly string[];
  /** Port of the authoritative servers (tests: the loopback port of their BIND9); null: 53. */
  authoritativePort: number | null;
  /** Per query (ms). */
  timeoutMs: number;
}

const MAX_CNAME_HOPS = 8;
const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

const bare = (name: string): string => name.replace(/\.$/, '').toLowerCase();
const isAbsent = (err: unknown): boolean => ABSENT.has((err as NodeJS.ErrnoException).code ?? '');

/**
 * What the kernel knows of DNS for validations, so that no provisioner has to: the zone of a name (walking up to
 * the first SOA), where CNAME delegation sends a validation name, and what each authoritative server of a zone
 * answers right now (asked directly, no cache in between: propagation means every one of them has it).
 */
export class DnsFacts {
  constructor(private readonly options: DnsFactsOptions) {}

  private resolver(servers?: readonly string[]): Resolver {
    const r = new Resolver({ timeout: this.options.timeoutMs, tries: 2 });
    const list = servers ?? this.options.resolvers;
    if (list.length > 0) r.setServers([...list]);
    return r;
  }

  /** The apex of the zone holding `fqdn`: the closest enclosing name that has an SOA. */
  async zoneOf(fqdn: string): Promise<string> {
    const labels = bare(fqdn).split('.');
    const r = this.resolver();
    for (let i = 0; i < labels.length - 1; i++) {
      const candidate = labels.slice(i).join('.');
      try {
        await r.resolveSoa(candidate);
        return candidate;
      } catch (err) {
        if (!isAbsent(err)) throw new Error(`SOA of ${candidate}: ${(err as Error).message}`);
      }
    }
    throw new Error(`no zone found for ${fqdn} (no SOA at any enclosing name)`);
  }

  /** Where the record for `fqdn` must be written: `fqdn` itself, or the end of its CNAME chain. */
  async delegated(fqdn: string): Promise<string> {
    const r = this.resolver();
    let name = bare(fqdn);
    const seen = new Set<string>();
    for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
      let targets: string[];
      try {
        targets = await r.resolveCname(name);
      } catch (err) {
        if (isAbsent(err)) return name;
        throw new Error(`CNAME of ${name}: ${(err as Error).message}`);
      }
      if (targets.length === 0) return name;
      seen.add(name);
      name = bare(targets[0]!);
      if (seen.has(name)) throw new Error(`CNAME loop at ${name}`);
    }
    throw new Error(`more than ${MAX_CNAME_HOPS} CNAMEs from ${fqdn}`);
  }

  /** The addresses (with port) of the zone's authoritative servers, from its NS records. */
  async authoritativeServers(zone: string): Promise<string[]> {
    const r = this.resolver();
    const port = this.options.authoritativePort ?? 53;
    const names = await r.resolveNs(zone);
    const out = new Set<string>();
    for (const ns of names) {
      for (const lookup of [r.resolve4.bind(r), r.resolve6.bind(r)]) {
        try {
          for (const address of await lookup(ns)) out.add(address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`);
        } catch (err) {
          if (!isAbsent(err)) throw new Error(`address of ${ns}: ${(err as Error).message}`);
        }
      }
    }
    if (out.size === 0) throw new Error(`no address for the name servers of ${zone} (${names.join(', ') || 'none'})`);
    return [...out];
  }

  /** The TXT values at `fqdn` as each of `servers` answers now (joined strings), by server. */
  async txtAt(fqdn: string, servers: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    await Promise.all(
      servers.map(async (server) => {
        try {
          out.set(server, (await this.resolver([server]).resolveTxt(bare(fqdn))).map((chunks) => chunks.join('')));
        } catch (err) {
          if (!isAbsent(err)) throw new Error(`TXT ${fqdn} at ${server}: ${(err as Error).message}`);
          out.set(server, []);
        }
      }),
    );
    return out;
  }

  /** Every authoritative server of the zone of `fqdn`, asked directly: the values all of them answer. */
  async authoritativeTxt(fqdn: string): Promise<string[]> {
    const servers = await this.authoritativeServers(await this.zoneOf(fqdn));
    const answers = [...(await this.txtAt(fqdn, servers)).values()];
    return answers.reduce((common, values) => common.filter((v) => values.includes(v)));
  }

  /**
   * Waits until every authoritative server answers (`present`) or no longer answers (`!present`) `value` at `fqdn`.
   * Throws after `timeoutMs` naming the servers that lag.
   */
  async waitFor(fqdn: string, zone: string, value: string, present: boolean, timeoutMs: number, intervalMs: number): Promise<void> {
    const servers = await this.authoritativeServers(zone);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const answers = await this.txtAt(fqdn, servers);
      const lagging = [...answers].filter(([, values]) => values.includes(value) !== present).map(([server]) => server);
      if (lagging.length === 0) return;
      if (Date.now() >= deadline) throw new Error(`${present ? 'not yet' : 'still'} at ${lagging.join(', ')} after ${Math.round(timeoutMs / 1000)} s: TXT ${fqdn}`);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
