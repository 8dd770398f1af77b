import type { Logger } from 'pino';
import { ProxyAgent, type Dispatcher } from 'undici';
import { ConfigurationError, type ConfigObject } from '@certwright/sdk';
import type { ConfigRegistry } from '../config-objects/registry.js';
import { usableCredential } from '../config-objects/types/credentials.js';
import { destinationHost, pickProxy } from './destinations.js';

/**
 * Where an outbound call goes through: the proxy's name (for messages) and its dispatchers. `dispatcher`
 * forwards a plain http request as an absolute-form request (the proxy sees, logs and filters it, as forward
 * proxies expect, and proxies commonly allow CONNECT to port 443 only: CRLs are mostly http on port 80);
 * `tunnel` always goes through CONNECT, so the proxy sees the destination's address and port but not the
 * path, query or headers (a webhook URL's path is often its credential), and any refusal is the CONNECT
 * answer, which cannot be mistaken for the destination's. https goes through CONNECT with either.
 */
export interface ProxyRoute {
  proxy: string;
  dispatcher: Dispatcher;
  tunnel: Dispatcher;
}

/** One proxy of a tenant's table: its patterns and either its dispatchers or why it cannot be used. */
interface Entry {
  name: string;
  destinations: string[];
  /** The proxy's address and authorization, for agents made later (a call's own trust anchors). */
  options?: ProxyAgent.Options;
  agents?: Agents;
  /** Agents whose TLS to the destination trusts only a call's CA bundle, by bundle (made on first use). */
  trusted?: Map<string, Agents>;
  problem?: string;
}

interface Agents {
  forward: ProxyAgent;
  tunnel: ProxyAgent;
}

interface Table {
  builtAt: number;
  entries: Promise<Entry[]>;
}

/**
 * The registry's change listeners only hear changes made on this node: tables are rebuilt at least this
 * often, so a change made on another node applies within this delay (one made here applies at once).
 */
const TABLE_TTL_MS = 30_000;
/** A dropped table's dispatchers are closed after this delay: a call that picked one just before finishes. */
const RETIRE_AFTER_MS = 5_000;

/**
 * Picks the HTTP proxy for each outbound call of the platform and of plugins from the `http-proxy`
 * configuration objects of the calling tenant (`default` for platform-wide calls), by their `destinations`
 * (destinations.ts). Each tenant's table holds one undici ProxyAgent per proxy, its credential opened once;
 * any change of a proxy or a credential drops the tables, so a rotated password is used by the next call.
 * Passwords live only in the agents' Proxy-Authorization header: never logged, never in an error.
 */
export class ProxyRouter {
  private readonly tables = new Map<string, Table>();
  private readonly retiring = new Set<ProxyAgent>();
  private closed = false;

  constructor(
    private readonly registry: ConfigRegistry,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    registry.onChange('http-proxy', () => this.dropAll());
    registry.onChange('credential', () => this.dropAll());
  }

  /**
   * The proxy for `url`, or undefined for a direct connection. Throws a ConfigurationError when the chosen
   * proxy cannot be used (its credential is missing or unfit): going direct instead would bypass a proxy
   * the administrator put on that path.
   */
  async routeFor(url: URL, tenant = 'default', caPem?: string): Promise<ProxyRoute | undefined> {
    if (this.closed) return undefined;
    const entry = pickProxy(await this.table(tenant), destinationHost(url));
    if (!entry) return undefined;
    if (entry.problem) throw new ConfigurationError(`HTTP proxy "${entry.name}": ${entry.problem}`);
    const agents = caPem ? this.trustedAgents(entry, caPem) : entry.agents!;
    return { proxy: entry.name, dispatcher: agents.forward, tunnel: agents.tunnel };
  }

  /** The entry's agents for a call that trusts only `caPem` (TLS to the destination, inside the tunnel). */
  private trustedAgents(entry: Entry, caPem: string): Agents {
    entry.trusted ??= new Map();
    let agents = entry.trusted.get(caPem);
    if (!agents) {
      const options = { ...entry.options!, requestTls: { ca: caPem } };
      agents = { forward: new ProxyAgent({ ...options, proxyTunnel: false }), tunnel: new ProxyAgent({ ...options, proxyTunnel: true }) };
      entry.trusted.set(caPem, agents);
    }
    return agents;
  }

  /** Closes every dispatcher (kernel stop). */
  async close(): Promise<void> {
    this.closed = true;
    const tables = [...this.tables.values()];
    this.tables.clear();
    const agents = [...this.retiring];
    this.retiring.clear();
    for (const table of tables) agents.push(...(await table.entries.catch(() => [] as Entry[])).flatMap(agentsOf));
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }

  private dropAll(): void {
    for (const table of this.tables.values()) this.retire(table);
    this.tables.clear();
  }

  private table(tenant: string): Promise<Entry[]> {
    const cached = this.tables.get(tenant);
    if (cached && this.clock() - cached.builtAt < TABLE_TTL_MS) return cached.entries;
    if (cached) this.retire(cached);
    const table: Table = { builtAt: this.clock(), entries: this.build(tenant) };
    this.tables.set(tenant, table);
    // A failed build (a database hiccup) is not kept: the next call tries again.
    table.entries.catch(() => {
      if (this.tables.get(tenant) === table) this.tables.delete(tenant);
    });
    return table.entries;
  }

  private async build(tenant: string): Promise<Entry[]> {
    const entries: Entry[] = [];
    for (const proxy of await this.registry.list('http-proxy', tenant)) {
      const destinations = (proxy.destinations as string[] | undefined) ?? [];
      // A proxy without destinations carries no call by itself: no entry, no dispatcher.
      if (destinations.length > 0) entries.push(await this.entry(tenant, proxy, destinations));
    }
    return entries;
  }

  private async entry(tenant: string, proxy: ConfigObject, destinations: string[]): Promise<Entry> {
    const name = proxy.name as string;
    const host = proxy.host as string;
    const uri = `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${proxy.port as number}`;
    let token: string | undefined;
    if (typeof proxy.credentials === 'string') {
      const usable = usableCredential(await this.registry.resolve('credential', tenant, proxy.credentials), proxy.credentials, 'password', 'proxy');
      if (!usable.ok) return { name, destinations, problem: `credentials: ${usable.reason}` };
      const login = usable.credential.login as string;
      const password = (usable.credential.password as { value?: string } | undefined)?.value ?? '';
      token = `Basic ${Buffer.from(`${login}:${password}`, 'utf8').toString('base64')}`;
    }
    const options: ProxyAgent.Options = { uri, ...(token ? { token } : {}) };
    return { name, destinations, options, agents: { forward: new ProxyAgent({ ...options, proxyTunnel: false }), tunnel: new ProxyAgent({ ...options, proxyTunnel: true }) } };
  }

  /** Closes a dropped table's dispatchers once the calls that already picked them had time to finish. */
  private retire(table: Table): void {
    void table.entries.then(
      (entries) => {
        for (const dispatcher of entries.flatMap(agentsOf)) {
          this.retiring.add(dispatcher);
          const timer = setTimeout(() => {
            this.retiring.delete(dispatcher);
            // close() waits for requests still running on it.
            dispatcher.close().catch((err: unknown) => this.logger.debug({ err }, 'closing a retired proxy dispatcher failed'));
          }, RETIRE_AFTER_MS);
          timer.unref();
        }
      },
      () => undefined,
    );
  }
}

function agentsOf(entry: Entry): ProxyAgent[] {
  return [...(entry.agents ? [entry.agents] : []), ...(entry.trusted?.values() ?? [])].flatMap((a) => [a.forward, a.tunnel]);
}
