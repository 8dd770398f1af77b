/**
 * Domain control validation (DCV). The kernel owns the DNS facts — the zone of a name (SOA walk), CNAME
 * delegation of a validation name, propagation checked at each authoritative server — and calls provisioners
 * only to write and remove records, providers only to run a validation method.
 */

/** A DNS record a provisioner writes for domain validation. */
export interface DnsRecord {
  /** Absolute name without the trailing dot (`_acme-challenge.example.com`), after CNAME delegation. */
  fqdn: string;
  type: 'TXT' | 'CNAME';
  /** TXT: the text (one string, unquoted). */
  value: string;
  /** Seconds (default: the provisioner's choice, 60 is typical). */
  ttl?: number;
  /**
   * The zone the kernel found for `fqdn` (its SOA owner, without the trailing dot): write the record there.
   * Always set when the kernel calls; a provisioner tested alone may find it itself.
   */
  zone?: string;
}

/**
 * Writes validation records into a DNS service. TXT writes are additive: `present` adds its value beside any
 * other values at that name (two validations of one name coexist), `cleanUp` removes exactly its value and
 * keeps the others. Both are idempotent (present twice = once; cleaning an absent value succeeds). A refusal by
 * the DNS service (a wrong key, an unknown zone) throws a PermanentError or ConfigurationError with a message
 * an administrator can act on; a passing failure (timeout) a TransientError.
 */
export interface DcvProvisioner {
  present(record: DnsRecord): Promise<void>;
  cleanUp(record: DnsRecord): Promise<void>;
  /** How long the kernel waits for propagation and how often it checks (default 120 s / 2 s). */
  propagation?(): { timeoutSeconds: number; intervalSeconds: number };
  /** The zone of a name, when the DNS service knows better than the SOA walk (rarely needed; the kernel asks DNS first). */
  findZone?(fqdn: string): Promise<string | null>;
}

export interface DcvChallenge {
  domain: string;
  method: string;
  token: string;
  data?: Record<string, unknown>;
}

/**
 * What the kernel lends a provider for one validation (since SDK 1.10): the policy's provisioner behind the
 * kernel's DNS facts. `publish` finds the zone, follows CNAME delegation, writes through the provisioner and
 * waits until every authoritative server answers the value; `unpublish` removes it; `lookupTxt` asks the
 * authoritative servers of the name (not a cache).
 */
export interface DcvContext {
  publish(record: Omit<DnsRecord, 'zone'>): Promise<DnsRecord>;
  unpublish(record: DnsRecord): Promise<void>;
  lookupTxt(fqdn: string): Promise<string[]>;
  /**
   * A policy in persistent mode (the CA/B Forum's dns-persist-01): keep one long-lived record per domain that
   * authorises these issuers for this account, instead of a fresh record per validation (the kernel does not
   * clean it up).
   */
  persist?: { issuerDomainNames: string[]; accountUri: string };
}

/** A validation method or service. */
export interface DcvProvider {
  prepare(domain: string, context?: DcvContext): Promise<DcvChallenge>;
  verify(challenge: DcvChallenge, context?: DcvContext): Promise<'valid' | 'pending' | 'invalid'>;
  /** Removes what prepare left behind (the record of a self-validation). */
  cleanUp?(challenge: DcvChallenge, context?: DcvContext): Promise<void>;
}

/**
 * DNS records written through a DCV policy, for plugins that answer DNS challenges themselves (an upstream ACME
 * CA's dns-01): the policy's provisioner behind the kernel's DNS facts, as providers get them. Since SDK 1.10.
 */
export interface DcvFacade {
  /**
   * Writes the record through the policy's provisioner (the zone found by SOA, a CNAME of the name followed) and
   * waits until every authoritative server answers it. Answers the record as written (fqdn, zone): give that to
   * unpublish. Rejects when the policy does not exist, names no provisioner, or does not cover `domain`.
   */
  publish(policy: string, domain: string, record: Omit<DnsRecord, 'zone'>, tenant?: string): Promise<DnsRecord>;
  /** Removes exactly that value (other values at the name stay). */
  unpublish(policy: string, domain: string, record: DnsRecord, tenant?: string): Promise<void>;
}
