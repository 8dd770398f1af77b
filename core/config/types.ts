import type { Capability } from '@certwright/sdk';

export type EndpointEntry = { host: string } & Record<Capability, boolean>;

/** The validated configuration (config/schema.json). */
export interface CertwrightConfig {
  server: {
    host: string;
    port: number;
    bodyLimit: number;
    maxParamLength: number;
    trustProxy: boolean | number | string[];
    shutdownTimeoutMs: number;
    tls: { port: number | null; certFile: string | null; keyFile: string | null; requestClientCert: boolean; hosts: string[]; connector: string; renewBeforeDays: number };
  };
  /** Absolute after loading. */
  dataDir: string;
  database: { url: string | null; pool: { min: number; max: number } };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'; requests: boolean };
  secrets: { masterKey: string | null };
  allowedHosts: string[];
  certwright: { endpoints: EndpointEntry[] | null };
  scheduler: { enabled: boolean; processEveryMs: number; lockLifetimeMs: number; stopTimeoutMs: number };
  events: { checkpoint: { everyEvents: number; everyMinutes: number } };
  triggers: {
    dispatchEveryMs: number;
    delivery: { retries: number; initialDelayMs: number; maxDelayMs: number; timeoutMs: number };
    expiryScan: { every: string };
  };
  pki: {
    /** Base URL in the CRL / OCSP / CA URLs of issued certificates; null: http://<server.host>:<server.port>. */
    publicBaseUrl: string | null;
    queue: { pollEveryMs: number; leaseMs: number };
    bootstrap: { localCa: boolean; keyType: 'ec-secp256r1' | 'ec-secp384r1' | 'rsa-2048' | 'rsa-3072' | 'rsa-4096' | 'ed-25519'; profileProtocols: Record<string, { enabled: boolean } & Record<string, unknown>> };
  };
  security: {
    /** Secret of the `administrator` account created on the first start; generated when null. */
    adminSecret: string | null;
    session: { lifetimeMs: number; secureCookies: 'auto' | 'always' | 'never' };
    /** How long a verified API key and a resolved principal are trusted without reading the database. */
    cacheTtlMs: number;
    cacheMaxEntries: number;
    serviceAccounts: { jwksRefreshCooldownMs: number };
    argon2: { memoryKiB: number; iterations: number; parallelism: number; maxConcurrent: number };
    throttle: { identifierFreeAttempts: number; addressFreeAttempts: number; identifierAlertAttempts: number; windowMs: number; maxLockMs: number };
  };
  /** Domain control validation: where the kernel asks DNS, and how long it waits for propagation. */
  dcv: {
    /** Recursive resolvers (`host` or `host:port`) for SOA, NS and CNAME lookups; empty: the system's. */
    resolvers: string[];
    /** Port of every authoritative server (a test's loopback BIND9); null: 53. */
    authoritativePort: number | null;
    queryTimeoutMs: number;
    propagationTimeoutMs: number;
    propagationIntervalMs: number;
    leaseMs: number;
  };
  /** CPU-heavy decodes (PKCS#12, large CRLs and detections) on a pool of worker threads (core/workers). */
  workers: {
    /** Threads; null: one per core less one, at least one. */
    size: number | null;
    perPrincipal: number;
    queue: number;
    idleTimeoutMs: number;
    /** Added to the threads' nice value (0: the event loop's priority). */
    nice: number;
  };
  plugins: {
    paths: string[];
    disabled: string[];
    instances: Record<string, { name: string; config: Record<string, unknown> }[]>;
  };
}

export type DeepPartial<T> = T extends unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | null } : T;
