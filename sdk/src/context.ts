import type { ConfigObjectType } from './config-objects.js';
import type { promises as dnsPromises } from 'node:dns';
import type { PluginManifest } from './manifest.js';
import type { DcvFacade, DcvProvider, DcvProvisioner } from './contracts/dcv.js';
import type { JobsFacade, TaskType } from './contracts/jobs.js';
import type { IdentityProvider } from './contracts/identity-provider.js';
import type { PkiConnector } from './contracts/pki-connector.js';
import type { ProtocolPlugin } from './contracts/protocol.js';
import type { EnrollmentFacade } from './contracts/enrollment.js';
import type { Knex } from 'knex';
import type { StorageBackend } from './contracts/storage.js';
import type { ThirdPartyConnector } from './contracts/third-party-connector.js';
import type { CertwrightEvent, TriggerChannel } from './contracts/trigger-channel.js';
import type { PkiToolkitFacade } from './pki-toolkit.js';
import type { ConfiguredRequest, ConfiguredResponse, EgressPolicy } from './egress-policy.js';

/** The logging surface plugins get (a pino child logger bound to the plugin id). */
export interface PluginLogger {
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  child(bindings: Record<string, unknown>): PluginLogger;
}

/** One configured instance of a plugin (validated against the manifest's configSchema). */
export interface PluginInstance<Config = Record<string, unknown>> {
  name: string;
  config: Config;
}

export type InstanceFactory<T> = (instance: PluginInstance) => T | Promise<T>;

/** Where a plugin registers what it provides; the key is the type name admins pick in configuration. */
export interface PluginRegistries {
  protocols: { register(plugin: ProtocolPlugin): void };
  triggerChannels: { register(type: string, channel: TriggerChannel): void };
  pkiConnectors: { register(type: string, factory: InstanceFactory<PkiConnector>): void };
  dcvProviders: { register(type: string, factory: InstanceFactory<DcvProvider>): void };
  dcvProvisioners: { register(type: string, factory: InstanceFactory<DcvProvisioner>): void };
  identityProviders: { register(type: string, factory: InstanceFactory<IdentityProvider>): void };
  thirdPartyConnectors: { register(type: string, factory: InstanceFactory<ThirdPartyConnector>): void };
  storages: { register(type: string, factory: InstanceFactory<StorageBackend>): void };
  /** Types of scheduled task (/api/v1/scheduler/tasks/) this plugin runs. */
  taskTypes: { register(type: string, taskType: TaskType): void };
  /** Configuration object types this plugin declares: the kernel serves their standard set (config-objects.ts). */
  configTypes: { declare(type: ConfigObjectType): void };
}

/** What a call may add to fetch's RequestInit (SDK 1.7). */
export interface EgressFetchOptions {
  /**
   * PEM certificates that are the only trust anchors of this call's TLS (a server under a private CA, such
   * as an internal ACME CA), in place of the system's. The call still goes through the configured HTTP proxy.
   */
  caPem?: string;
}

/** HTTP client that only reaches the hosts named in the manifest's `egress`. */
export interface EgressHttpClient {
  fetch(url: string | URL, init?: RequestInit, options?: EgressFetchOptions): Promise<Response>;
  /**
   * A request to a URL an administrator configured (webhook, chat incoming webhook), outside the manifest's
   * `egress`: checked against `policy` (missing fields at DEFAULT_EGRESS_POLICY), resolved once, every
   * resolved address checked, the connection pinned to the checked address, no redirect followed.
   * Rejects with EgressDeniedError when refused (do not retry) and TransientError on network failures and
   * timeouts; any HTTP status resolves.
   */
  fetchConfigured(url: string, request: ConfiguredRequest, policy?: Partial<EgressPolicy>): Promise<ConfiguredResponse>;
}

/** Key-value store scoped to the plugin and the tenant. Values are JSON. */
export interface ScopedKeyValueStore {
  /** The value stored under `key`; undefined when absent or expired. */
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** Stores `value` under `key`, with the expiry `options` give (none: kept until deleted). */
  set(key: string, value: unknown, options?: KvWriteOptions): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Stores `value` unless the key holds a value that has not expired; answers the value stored (the first
   * writer's, across nodes). An expired value is replaced, and the new one gets the expiry `options` give.
   */
  setIfAbsent<T>(key: string, value: T, options?: KvWriteOptions): Promise<T>;
  /**
   * Adds `by` (default 1, a safe integer) to the integer stored under `key` (absent: 0), stores the sum and
   * answers it, atomically across nodes: concurrent callers never get the same number (counters such as CRL
   * numbers). A TypeError when the stored value is not an integer; nothing is changed then. Since SDK 1.4.
   */
  increment(key: string, by?: number): Promise<number>;
}

/** How long a kv value lives. Since SDK 1.5. */
export interface KvWriteOptions {
  /**
   * Milliseconds from now after which the value reads as absent and is deleted (by an hourly job); a positive
   * safe integer, else a TypeError and nothing written. Omitted: kept until deleted. For records that are dead
   * once their work is done (per-request idempotency records, upstream orders), so they do not pile up.
   * `increment` keeps a live value's expiry; on an expired value it starts again from 0, with no expiry.
   */
  ttlMs?: number;
}

/** Encryption at rest under the platform's master key (AES-256-GCM). */
export interface SecretsFacade {
  seal(plaintext: string, aad?: string): string;
  open(sealed: string, aad?: string): string;
}

/** A credential (/api/v1/security/credentials/) with its secrets, as a plugin uses it. */
export interface ResolvedCredential {
  name: string;
  type: 'password' | 'raw' | 'x509' | 'keypair';
  login?: string;
  password?: string;
  /** `raw`: the token or API key. */
  secret?: string;
  certificate?: string;
  privateKey?: string;
  publicKey?: string;
}

/**
 * Credentials by name, read at the time of use: a rotation (a PUT on the credential) applies to the very
 * next call of every plugin naming it. Since SDK 1.6.
 */
export interface CredentialsFacade {
  /**
   * The named credential; a PermanentError when it does not exist, is of another kind, or lists targets
   * that do not include `target` (what uses it: `trigger`, `pki`, `dcv`, `storage`…).
   */
  resolve(name: string, use: { kind: ResolvedCredential['type']; target: string; tenant?: string }): Promise<ResolvedCredential>;
}

export type NewEvent = Omit<CertwrightEvent, 'id' | 'timestamp' | 'tenant'> & { tenant?: string };

export interface EventsFacade {
  append(event: NewEvent): Promise<{ id: string }>;
}

/** A local account (/api/v1/security/identity/locals/) as identity providers see it: never its secret. */
export interface LocalAccount {
  identifier: string;
  name?: string;
  email?: string;
  /** When its secret last changed (epoch ms). */
  secretChangedAt?: number;
}

/** The platform's local accounts, for identity-provider plugins. Secrets are verified with argon2id. */
export interface LocalAccountsFacade {
  /**
   * The enabled account whose secret is `secret`, or null (unknown, disabled, no secret, wrong secret). A plugin
   * that is itself the entry point (a protocol's HTTP Basic) passes `context` (since SDK 1.9): the check is then
   * throttled as logins are (per identifier and client address, and per address: null while locked) and a
   * verified secret is remembered as the login cache does. Identity providers, called inside a login that does
   * both already, omit it.
   */
  verify(tenant: string, identifier: string, secret: string, context?: { remoteAddress?: string }): Promise<LocalAccount | null>;
  /** The enabled account, or null. */
  find(tenant: string, identifier: string): Promise<LocalAccount | null>;
}

/** A client certificate as ctx.clientCertificates reads it. Since SDK 1.10. */
export interface ClientCertificate {
  pem: string;
  /** RFC 4514, as the inventory shows it. */
  subjectDn: string;
  issuerDn: string;
  /** Lower-case hex. */
  serial: string;
  /** SHA-1 of the DER, lower-case hex (the inventory's `thumbprint`). */
  thumbprint: string;
  /** Epoch ms. */
  notBefore: number;
  notAfter: number;
  /** Subject alternative names: rfc822Name, the Microsoft UPN otherName, dNSName. */
  emails: string[];
  upns: string[];
  dnsNames: string[];
}

/**
 * What ctx.clientCertificates.verify answers. `reason` is a stable code: `unreadable`, `not-yet-valid`, `expired`,
 * `no-client-auth-eku`, `untrusted-ca`, `invalid-chain`, `revoked`, `ocsp-unknown`, `ocsp-unavailable`; `detail`
 * says more (for the technical log and events); `certificate` is there once the certificate could be read.
 * Since SDK 1.10.
 */
export type ClientCertificateVerdict =
  | { ok: true; certificate: ClientCertificate }
  | { ok: false; reason: string; detail?: string; certificate?: ClientCertificate };

/** Client certificates judged as X509 login judges them (spec "Authentication"). Since SDK 1.10. */
export interface ClientCertificatesFacade {
  /**
   * Whether `pem` (the leaf first; further certificates of the PEM may help complete the path) may authenticate:
   * within its validity, the clientAuth extended key usage, a path to the imported CA that issued it, flagged
   * trusted for client authentication, no link revoked by the CRL cache, and when that CA names an OCSP
   * responder, a good answer from it. Since SDK 1.10.
   */
  verify(pem: string, tenant?: string): Promise<ClientCertificateVerdict>;
  /**
   * Whether the certificate (a PEM or its SHA-1 thumbprint) is in the inventory and matches `query`, a query of
   * the inventory's certificate query language. Rejects when the query does not parse. Since SDK 1.10.
   */
  matchesQuery(certificate: string, query: string, tenant?: string): Promise<boolean>;
  /** Why `query` is not a valid certificate query, or null when it is (for a configuration type's validate hook). Since SDK 1.10. */
  queryProblem(query: string): string | null;
}

export interface Clock {
  now(): number;
}

/** What the kernel hands a plugin's `register(ctx)`. Plugins never import core: this is their whole world. */
export interface PluginContext {
  manifest: Readonly<PluginManifest>;
  /** Absolute folder of the plugin. */
  root: string;
  logger: PluginLogger;
  instances: readonly PluginInstance[];
  registries: PluginRegistries;
  http: EgressHttpClient;
  dns: Pick<dnsPromises.Resolver, 'resolve' | 'resolveTxt' | 'resolve4' | 'resolve6' | 'resolveCname' | 'resolveNs' | 'resolveSoa'>;
  clock: Clock;
  kv: ScopedKeyValueStore;
  secrets: SecretsFacade;
  events: EventsFacade;
  /** The platform's local accounts (identity providers verify secrets through it). */
  localAccounts: LocalAccountsFacade;
  /** Credentials administrators keep in /api/v1/security/credentials/ (since SDK 1.6). */
  credentials: CredentialsFacade;
  /** The platform's PKI toolkit: keys, certificates, CRLs and OCSP responses (connectors that sign). */
  pki: PkiToolkitFacade;
  /** Background jobs, persisted in the database; only the names the manifest's `jobs` lists. */
  jobs: JobsFacade;
  /** DNS records written through a DCV policy (dns-01 answered by the plugin itself; since SDK 1.10). */
  dcv: DcvFacade;
  /** The objects of the configuration types this plugin declared, secrets open (since SDK 1.8). */
  configObjects: PluginConfigObjects;
  /** Issuance through the request workflow, for protocol plugins (since SDK 1.8). */
  enrollment: EnrollmentFacade;
  /**
   * The platform's database (knex), for the tables the plugin's own `migrations` create (since SDK 1.8).
   * A plugin touches only its own tables, named after it (`acme_…` for protocol-acme), always with bound
   * parameters; the kernel's tables are reached through the facades.
   */
  db: PluginDatabase;
  /** Client certificates checked as X509 login checks them (identity providers; since SDK 1.10). */
  clientCertificates: ClientCertificatesFacade;
}

/** Reads objects of the plugin's own configuration types (registries.configTypes.declare). */
export interface PluginConfigObjects {
  /** The object named `name` of `type`, its secret fields open; null when absent. A TypeError for a type the plugin did not declare. */
  get(type: string, name: string, tenant?: string): Promise<Record<string, unknown> | null>;
  /** Every object of `type`, secrets open, in name order. A TypeError for a type the plugin did not declare. Since SDK 1.10. */
  list(type: string, tenant?: string): Promise<Record<string, unknown>[]>;
}

/** A knex handle on the platform's database (SQLite or MySQL/MariaDB). */
export type PluginDatabase = Knex;
