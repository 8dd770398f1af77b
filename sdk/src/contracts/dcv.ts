/** A DNS record a provisioner writes for domain validation. TXT writes are additive. */
export interface DnsRecord {
  fqdn: string;
  type: 'TXT' | 'CNAME';
  value: string;
  ttl?: number;
  zone?: string;
}

/** A DNS provider that provisions validation records. */
export interface DcvProvisioner {
  present(record: DnsRecord): Promise<void>;
  cleanUp(record: DnsRecord): Promise<void>;
  propagation?(): { timeoutSeconds: number; intervalSeconds: number };
  findZone?(fqdn: string): Promise<string | null>;
}

export interface DcvChallenge {
  domain: string;
  method: string;
  token: string;
  data?: Record<string, unknown>;
}

/** A validation method or service. */
export interface DcvProvider {
  prepare(domain: string): Promise<DcvChallenge>;
  verify(challenge: DcvChallenge): Promise<'valid' | 'pending' | 'invalid'>;
}
