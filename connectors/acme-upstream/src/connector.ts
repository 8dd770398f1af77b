/**
 * The `acme-upstream` PKI connector: enrolls from an upstream ACME CA (RFC 8555).
 *
 * A connector never sleeps. `issue()` creates the order (or finds the one already made for that requestId)
 * and moves it as far as it can without waiting: accept the challenges, finalize when the order is ready,
 * download when it is valid. When the CA is not done it answers `pending` with the requestId as poll token;
 * `poll()` carries on from the state kept in the plugin's key-value store. Retrying is the kernel's job.
 *
 * Kept in the store, per instance: the account (its ES256 key sealed with the context's secrets, and its
 * URL), each request's order (order URL, CSR, identifiers, the dns-01 records published for it, and once issued
 * the certificate), and the chain of the last issued certificate (what getCaChain answers).
 *
 * dns-01 (challengeType dns-01, config dcvPolicy): for each pending authorization the connector publishes the key
 * authorization digest (RFC 8555 §8.4) at `_acme-challenge.<name>` through the DCV policy's provisioner
 * (ctx.dcv: zone by SOA, CNAME delegation followed, every authoritative server answering before it returns),
 * then accepts the challenge. What it published is written in the order's state before and after the write, and
 * removed once the order no longer needs it (ready, processing, valid or invalid), when the request fails, or when
 * the CA forgets the order: never left behind.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, FlattenedSign } from 'jose';
import {
  ConfigurationError,
  PendingError,
  PermanentError,
  PluginError,
  TransientError,
  type IssueOutcome,
  type IssueRequest,
  type PkiConnector,
  type PluginContext,
  type PluginInstance,
  type PluginLogger,
  type ResolvedCredential,
  type RevokeRequest,
  type DnsRecord,
} from '@certwright/sdk';
import { AcmeClient, AcmeProblem, retryAfterOf, type AccountKey, type AcmeResponse } from './acme-client.js';
import { checkedMacKey, readConfig, type AcmeUpstreamConfig } from './config.js';
import { DerError, formatIp, pemBlocks, readCsr, splitCertificates, type CsrNames } from './der.js';
import { reasonCode } from './revocation.js';
import { fetchTransport } from './transport.js';

export interface Identifier {
  type: 'dns' | 'ip';
  value: string;
}

interface StoredAccount {
  v: 1;
  directoryUrl: string;
  /** PKCS#8 PEM of the account key, sealed by ctx.secrets. */
  keySealed: string;
  url?: string;
  createdAt: number;
}

interface OrderState {
  v: 1;
  requestId: string;
  directoryUrl: string;
  csrSha256: string;
  /** The CSR, DER as base64url (what finalize sends). */
  csr: string;
  identifiers: Identifier[];
  orderUrl: string;
  accountUrl: string;
  createdAt: number;
  issued?: { certificatePem: string; chainPem: string[] };
  /** dns-01 records of this request: written here before ctx.dcv.publish is called, removed once unpublished. */
  dns01?: Dns01Record[];
}

/** One dns-01 TXT record published (or being published) for a challenge. */
interface Dns01Record {
  /** The challenge it answers (one record per challenge). */
  challengeUrl: string;
  /** The DCV policy it was written through, and the domain the policy was asked about (a wildcard's base name). */
  policy: string;
  domain: string;
  /** What was asked of ctx.dcv.publish. */
  requested: Omit<DnsRecord, 'zone'>;
  /** What ctx.dcv.publish answered (after CNAME delegation, with its zone): what unpublish removes. */
  written?: DnsRecord;
}

interface AcmeOrder {
  status: 'pending' | 'ready' | 'processing' | 'valid' | 'invalid';
  identifiers?: Identifier[];
  authorizations?: string[];
  finalize: string;
  certificate?: string;
  error?: { type?: string; detail?: string };
}

interface AcmeChallenge {
  type: string;
  url: string;
  token?: string;
  status: 'pending' | 'processing' | 'valid' | 'invalid';
  error?: { type?: string; detail?: string };
}

interface AcmeAuthorization {
  status: 'pending' | 'valid' | 'invalid' | 'deactivated' | 'expired' | 'revoked';
  identifier: Identifier;
  /** RFC 8555 §7.1.4: the authorization of a wildcard name (its identifier is the base name). */
  wildcard?: boolean;
  challenges: AcmeChallenge[];
}

/** Problem types that mean "fix the configuration" rather than "this request cannot be issued". */
const CONFIGURATION_PROBLEMS = new Set([
  'externalAccountRequired',
  'userActionRequired',
  'agreementRequired',
  'invalidContact',
  'unsupportedContact',
  'accountDoesNotExist',
]);
/** Problem types worth retrying (besides any 5xx). */
const TRANSIENT_PROBLEMS = new Set(['serverInternal', 'rateLimited', 'badNonce']);

/** Request ids (24 hex in Certwright) become store keys and poll tokens. */
const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * How long an order's state is kept after its last write (kv ttlMs): past the life of any ACME order (RFC 8555
 * orders expire; public CAs give days), so a pending one is never forgotten while the CA could still finish it,
 * and finished ones do not pile up, one row per certificate.
 */
const ORDER_STATE_TTL_MS = 30 * 86_400_000;
const isTransient = (p: AcmeProblem): boolean => p.status >= 500 || p.status === 429 || TRANSIENT_PROBLEMS.has(p.short);
const sha256 = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');
/** TTL of the dns-01 records (seconds): short, the record lives for one validation. */
const DNS01_TTL = 60;
const isTransientError = (err: unknown): boolean => err instanceof TransientError || (err as Error | null)?.name === 'TransientError';
const problemText = (e: { type?: string; detail?: string } | undefined): string => (e ? `${e.type ?? 'error'}: ${e.detail ?? ''}`.trim() : '');

/** SAN type names of IssueRequest.sans (`DNSNAME`, `dns`, `dNSName`, `IPADDRESS`, `ip`, …). */
function sanKind(type: string): 'dns' | 'ip' | null {
  const t = type.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (t === 'dns' || t === 'dnsname') return 'dns';
  if (t === 'ip' || t === 'ipaddress') return 'ip';
  return null;
}

const GENERAL_NAME_TAGS: Record<number, string> = { 0: 'otherName', 1: 'rfc822Name', 3: 'x400Address', 4: 'directoryName', 5: 'ediPartyName', 6: 'URI', 8: 'registeredID' };
const dnsValue = (v: string): string => v.trim().toLowerCase().replace(/\.$/, '');

/**
 * The ACME identifiers of a request: the CSR's DNS names and IP addresses (and its common name when that is
 * one). An ACME CA issues exactly what the order names and the order must match the CSR, so names in
 * `request.sans` that the CSR lacks are refused rather than silently dropped.
 */
export function identifiersOf(csr: CsrNames, sans: IssueRequest['sans']): { identifiers: Identifier[] } | { rejected: string } {
  const ids = new Map<string, Identifier>();
  const add = (id: Identifier) => ids.set(`${id.type}:${id.value}`, id);
  for (const name of csr.dnsNames) add({ type: 'dns', value: dnsValue(name) });
  for (const ip of csr.ipAddresses) add({ type: 'ip', value: ip });
  const cn = csr.commonName?.trim();
  if (cn) {
    const ip = formatIp(cn);
    if (ip) add({ type: 'ip', value: ip });
    else if (/^[A-Za-z0-9*_.-]+$/.test(cn) && cn.includes('.')) add({ type: 'dns', value: dnsValue(cn) });
  }
  if (csr.otherSanTags.length) {
    const kinds = [...new Set(csr.otherSanTags.map((t) => GENERAL_NAME_TAGS[t] ?? `[${t}]`))];
    return { rejected: `an ACME CA issues DNS names and IP addresses only; the CSR also asks for ${kinds.join(', ')}` };
  }
  for (const san of sans ?? []) {
    const kind = sanKind(san.type);
    if (!kind) return { rejected: `an ACME CA issues DNS names and IP addresses only, not a ${san.type} SAN` };
    const value = kind === 'dns' ? dnsValue(san.value) : formatIp(san.value.trim());
    if (value === null) return { rejected: `"${san.value}" is not an IP address` };
    if (!ids.has(`${kind}:${value}`)) return { rejected: `${san.value} is requested but not in the CSR: an ACME CA issues exactly the CSR's names` };
  }
  if (ids.size === 0) return { rejected: 'the CSR names no DNS name or IP address (subjectAltName or common name)' };
  return { identifiers: [...ids.values()].sort((a, b) => a.type.localeCompare(b.type) || a.value.localeCompare(b.value)) };
}

/** Reads the PEM CSR of a request: its DER and names, or why it cannot be used. */
function csrOf(pem: string): { der: Buffer; names: CsrNames } | { rejected: string } {
  const block = pemBlocks(pem ?? '').find((b) => b.label === 'CERTIFICATE REQUEST' || b.label === 'NEW CERTIFICATE REQUEST');
  if (!block) return { rejected: 'csrPem holds no PEM certificate request' };
  try {
    return { der: block.der, names: readCsr(block.der) };
  } catch (err) {
    if (err instanceof DerError) return { rejected: `the CSR cannot be read: ${err.message}` };
    throw err;
  }
}

export class AcmeUpstreamConnector implements PkiConnector {
  readonly config: AcmeUpstreamConfig;
  private readonly log: PluginLogger;
  private readonly client: AcmeClient;
  private account: { key: AccountKey; url: string } | undefined;
  private accountLoading: Promise<{ key: AccountKey; url: string }> | undefined;
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly scope: string;

  constructor(
    private readonly ctx: PluginContext,
    private readonly instance: PluginInstance,
  ) {
    this.config = readConfig(instance.config);
    this.log = ctx.logger.child({ connector: 'acme-upstream', instance: instance.name });
    const transport = fetchTransport(ctx.http, this.config.timeoutMs, this.config.caBundlePem);
    this.client = new AcmeClient(this.config.directoryUrl, transport, this.log);
    // The store is the plugin's, shared by its instances: keys carry the instance (hashed if long, keys are ≤ 191).
    this.scope = instance.name.length <= 100 ? instance.name : sha256(instance.name).slice(0, 32);
  }

  private key(kind: 'account' | 'order' | 'chain', id?: string): string {
    return id === undefined ? `${kind}:${this.scope}` : `${kind}:${this.scope}:${id}`;
  }

  // ------------------------------------------------------------------------------------------------ contract

  async testConnection(): Promise<{ ok: boolean; detail?: string }> {
    try {
      const dir = await this.client.fetchDirectory();
      if (dir.meta?.externalAccountRequired && !this.config.eab) {
        return { ok: false, detail: `${this.config.directoryUrl} requires External Account Binding: configure eab {kid, hmacKey}` };
      }
      const tos = dir.meta?.termsOfService ? `; terms of service: ${dir.meta.termsOfService}` : '';
      return { ok: true, detail: `ACME directory ${this.config.directoryUrl}${dir.meta?.externalAccountRequired ? ' (External Account Binding required)' : ''}${tos}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message || String(err) };
    }
  }

  /**
   * The CA chain: `caChainPem` when configured, else the chain that came with the last certificate this
   * instance downloaded (ACME has no resource for the CA chain), else nothing yet.
   */
  async getCaChain(): Promise<string[]> {
    if (this.config.caChainPem) return splitCertificates(this.config.caChainPem);
    return (await this.ctx.kv.get<string[]>(this.key('chain'))) ?? [];
  }

  issue(request: IssueRequest): Promise<IssueOutcome> {
    if (typeof request?.requestId !== 'string' || !REQUEST_ID.test(request.requestId)) {
      return Promise.reject(new PermanentError('IssueRequest.requestId must be 1 to 64 letters, digits, - or _'));
    }
    return this.serialized(request.requestId, async () => {
      const csr = csrOf(request.csrPem);
      if ('rejected' in csr) return { status: 'rejected', reason: csr.rejected };
      const names = identifiersOf(csr.names, request.sans);
      if ('rejected' in names) return { status: 'rejected', reason: names.rejected };
      if (request.validityDays !== undefined) this.log.debug({ requestId: request.requestId }, 'validityDays is not sent: the ACME CA sets the validity');

      const csrSha256 = sha256(csr.der);
      const existing = await this.ctx.kv.get<OrderState>(this.key('order', request.requestId));
      // An order made at another directory (the instance was repointed) is not continued.
      if (existing && existing.directoryUrl === this.config.directoryUrl) {
        if (existing.csrSha256 !== csrSha256) throw new PermanentError(`request ${request.requestId} was started with another CSR`);
        return this.advance(existing);
      }
      let state: OrderState;
      try {
        state = await this.createOrder({ requestId: request.requestId, csrSha256, csr: csr.der.toString('base64url'), identifiers: names.identifiers });
      } catch (err) {
        return this.failure(err, request.requestId);
      }
      return this.advance(state);
    });
  }

  /** The poll token is the request id: the order's state is in the store under it. */
  poll(pollToken: string): Promise<IssueOutcome> {
    const unknown = () => new PermanentError(`unknown poll token "${String(pollToken).slice(0, 64)}" for ACME instance ${this.instance.name}`);
    if (typeof pollToken !== 'string' || !REQUEST_ID.test(pollToken)) return Promise.reject(unknown());
    return this.serialized(pollToken, async () => {
      const state = await this.ctx.kv.get<OrderState>(this.key('order', pollToken));
      if (!state) throw unknown();
      return this.advance(state);
    });
  }

  async revoke(request: RevokeRequest): Promise<void> {
    const reason = reasonCode(request.reason);
    const block = pemBlocks(request.certificatePem ?? '').find((b) => b.label === 'CERTIFICATE');
    if (!block) throw new PermanentError('RevokeRequest.certificatePem holds no PEM certificate');
    let serial: string;
    try {
      serial = new X509Certificate(block.der).serialNumber.toLowerCase();
    } catch (err) {
      throw new PermanentError(`RevokeRequest.certificatePem cannot be read: ${(err as Error).message}`);
    }
    const dir = await this.client.directory();
    if (!dir.revokeCert) throw new ConfigurationError(`${this.config.directoryUrl} offers no revokeCert resource`);
    try {
      await this.signed(dir.revokeCert, { certificate: block.der.toString('base64url'), reason });
      this.log.info({ serial, reason }, 'certificate revoked at the ACME CA');
    } catch (err) {
      if (err instanceof AcmeProblem) {
        if (err.short === 'alreadyRevoked') {
          this.log.info({ serial }, 'the ACME CA had already revoked the certificate');
          return;
        }
        if (isTransient(err)) throw new TransientError(`revocation at ${err.url}: ${err.message}`, err.retryAfterSeconds);
        if (CONFIGURATION_PROBLEMS.has(err.short)) throw new ConfigurationError(`revocation at ${err.url}: ${err.message}`);
        throw new PermanentError(`the ACME CA refused the revocation: ${err.message}`);
      }
      throw err;
    }
  }

  // ------------------------------------------------------------------------------------------------ account

  /** The account: the stored one, or a new key registered with newAccount (and EAB when configured). */
  private async ensureAccount(): Promise<{ key: AccountKey; url: string }> {
    if (this.account) return this.account;
    this.accountLoading ??= this.loadAccount().finally(() => {
      this.accountLoading = undefined;
    });
    return this.accountLoading;
  }

  private async loadAccount(): Promise<{ key: AccountKey; url: string }> {
    const aad = `account-key:${this.scope}`;
    const stored = await this.ctx.kv.get<StoredAccount>(this.key('account'));
    let record = stored?.v === 1 && stored.directoryUrl === this.config.directoryUrl ? stored : undefined;
    let key: AccountKey;
    if (record) {
      let pem: string;
      try {
        pem = this.ctx.secrets.open(record.keySealed, aad);
      } catch {
        throw new ConfigurationError(`the stored ACME account key of instance ${this.instance.name} cannot be opened (was the master key changed?)`);
      }
      const privateKey = createPrivateKey(pem);
      key = { privateKey, jwk: await exportJWK(createPublicKey(privateKey)) };
    } else {
      const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      key = { privateKey: pair.privateKey, jwk: await exportJWK(pair.publicKey) };
      const pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      // Stored before newAccount: if what follows fails, a retry registers the same key, and a CA answers
      // newAccount for a known key with the existing account.
      record = { v: 1, directoryUrl: this.config.directoryUrl, keySealed: this.ctx.secrets.seal(pem, aad), createdAt: this.ctx.clock.now() };
      await this.ctx.kv.set(this.key('account'), record);
      this.log.info({ directoryUrl: this.config.directoryUrl }, 'new ACME account key generated (ES256)');
    }
    if (!record.url) {
      const url = await this.newAccount(key);
      record = { ...record, url };
      await this.ctx.kv.set(this.key('account'), record);
    }
    this.account = { key, url: record.url! };
    return this.account;
  }

  /** The External Account Binding key: inline, or its credential read now (a rotation applies at once). */
  private async eabKey(): Promise<{ kid: string; hmacKey: string } | undefined> {
    const eab = this.config.eab;
    if (!eab || 'kid' in eab) return eab;
    let credential: ResolvedCredential;
    try {
      credential = await this.ctx.credentials.resolve(eab.credentials, { kind: 'password', target: 'pki' });
    } catch (err) {
      throw new ConfigurationError(`eab.credentials: ${(err as Error).message}`);
    }
    if (!credential.login) throw new ConfigurationError(`eab.credentials: credential "${eab.credentials}" has no login (the key identifier)`);
    return { kid: credential.login, hmacKey: checkedMacKey(credential.password, `eab.credentials "${eab.credentials}" password`) };
  }

  private async newAccount(key: AccountKey): Promise<string> {
    const dir = await this.client.directory();
    if (dir.meta?.externalAccountRequired && !this.config.eab) {
      throw new ConfigurationError(`${this.config.directoryUrl} requires External Account Binding: configure eab {kid, hmacKey}`);
    }
    const payload: Record<string, unknown> = { termsOfServiceAgreed: this.config.termsOfServiceAgreed };
    if (this.config.contactEmail) payload.contact = [`mailto:${this.config.contactEmail}`];
    const binding = await this.eabKey();
    if (binding) {
      // RFC 8555 §7.3.4: the account JWK, MACed (HS256) with the CA-issued key under its key identifier.
      payload.externalAccountBinding = await new FlattenedSign(new TextEncoder().encode(JSON.stringify(key.jwk)))
        .setProtectedHeader({ alg: 'HS256', kid: binding.kid, url: dir.newAccount })
        .sign(Buffer.from(binding.hmacKey, 'base64url'));
    }
    let res: AcmeResponse;
    try {
      res = await this.client.post(dir.newAccount, payload, key, null);
    } catch (err) {
      if (err instanceof AcmeProblem) {
        if (isTransient(err)) throw new TransientError(`account registration at ${err.url}: ${err.message}`, err.retryAfterSeconds);
        const eab = binding ? ` (External Account Binding key id ${binding.kid})` : '';
        throw new ConfigurationError(`the ACME server refused the account${eab}: ${err.message}`);
      }
      throw err;
    }
    const url = res.header('location');
    if (!url) throw new TransientError(`newAccount (${dir.newAccount}) answered HTTP ${res.status} without the account URL`);
    const status = res.json<{ status?: string }>().status;
    if (status && status !== 'valid') throw new ConfigurationError(`the ACME account ${url} is ${status}`);
    this.log.info({ account: url, ...(binding ? { eabKid: binding.kid } : {}) }, 'ACME account ready');
    return url;
  }

  /** A request signed with the account's `kid`; an account the CA no longer knows is registered again once. */
  private async signed(url: string, payload: unknown, accept?: string): Promise<AcmeResponse> {
    const account = await this.ensureAccount();
    try {
      return await this.client.post(url, payload, account.key, account.url, accept);
    } catch (err) {
      if (!(err instanceof AcmeProblem) || err.short !== 'accountDoesNotExist') throw err;
      this.log.warn({ account: account.url }, 'the ACME server no longer knows the account: registering the key again');
      this.account = undefined;
      const stored = await this.ctx.kv.get<StoredAccount>(this.key('account'));
      if (stored) await this.ctx.kv.set(this.key('account'), { ...stored, url: undefined });
      const again = await this.ensureAccount();
      return this.client.post(url, payload, again.key, again.url, accept);
    }
  }

  // ------------------------------------------------------------------------------------------------ orders

  private async createOrder(input: Pick<OrderState, 'requestId' | 'csrSha256' | 'csr' | 'identifiers'>): Promise<OrderState> {
    const dir = await this.client.directory();
    const res = await this.signed(dir.newOrder, { identifiers: input.identifiers });
    const orderUrl = res.header('location');
    if (!orderUrl) throw new TransientError(`newOrder (${dir.newOrder}) answered HTTP ${res.status} without the order URL`);
    const state: OrderState = {
      v: 1,
      ...input,
      directoryUrl: this.config.directoryUrl,
      orderUrl,
      accountUrl: this.account?.url ?? '',
      createdAt: this.ctx.clock.now(),
    };
    await this.ctx.kv.set(this.key('order', input.requestId), state, { ttlMs: ORDER_STATE_TTL_MS });
    this.log.info({ requestId: input.requestId, order: orderUrl, identifiers: input.identifiers.map((i) => i.value) }, 'ACME order created');
    return state;
  }

  private pending(state: OrderState, retryAfterSeconds?: number): IssueOutcome {
    return { status: 'pending', pollToken: state.requestId, retryAfterSeconds: retryAfterSeconds ?? this.config.retryAfterSeconds };
  }

  private rejected(state: OrderState, reason: string): IssueOutcome {
    this.log.info({ requestId: state.requestId, order: state.orderUrl, reason }, 'ACME order rejected');
    return { status: 'rejected', reason };
  }

  /**
   * Moves the order on as far as it goes without waiting; the dns-01 records go once the order no longer needs
   * them (it left `pending`), the request is finished, or it failed for good.
   */
  private async advance(initial: OrderState): Promise<IssueOutcome> {
    const ref = { state: initial };
    let outcome: IssueOutcome;
    try {
      outcome = await this.move(ref);
    } catch (err) {
      if (!isTransientError(err) && !(err instanceof PendingError)) await this.releaseDns01(ref.state, 'the request failed');
      throw err;
    }
    if (outcome.status !== 'pending') await this.releaseDns01(ref.state, outcome.status === 'issued' ? 'the order is valid' : 'the order failed');
    return outcome;
  }

  private async move(ref: { state: OrderState }): Promise<IssueOutcome> {
    let state = ref.state;
    if (state.issued) return { status: 'issued', certificatePem: state.issued.certificatePem, chainPem: [...state.issued.chainPem] };
    try {
      // A few steps at most: accepting the last challenge can make the order ready, finalizing can make it valid.
      for (let step = 0; step < 4; step++) {
        let res: AcmeResponse;
        try {
          res = await this.signed(state.orderUrl, undefined);
        } catch (err) {
          // The CA forgot the order (a test CA restarted, an order purged long after expiry): start again.
          if (err instanceof AcmeProblem && err.status === 404 && step === 0) {
            this.log.warn({ requestId: state.requestId, order: state.orderUrl }, 'the ACME order is gone: creating a new one');
            await this.releaseDns01(state, 'the ACME order is gone');
            state = await this.createOrder({ requestId: state.requestId, csrSha256: state.csrSha256, csr: state.csr, identifiers: state.identifiers });
            ref.state = state;
            continue;
          }
          throw err;
        }
        const order = res.json<AcmeOrder>();
        const retryAfter = retryAfterOf(res.header('retry-after'));
        this.log.debug({ requestId: state.requestId, order: state.orderUrl, status: order.status }, 'ACME order status');
        switch (order.status) {
          case 'valid':
            return await this.download(state, order);
          case 'invalid':
            return this.rejected(state, await this.whyInvalid(order));
          case 'processing':
            await this.releaseDns01(state, 'the order is processing');
            return this.pending(state, retryAfter);
          case 'ready': {
            await this.releaseDns01(state, 'the order is ready');
            const fin = await this.signed(order.finalize, { csr: state.csr });
            const after = fin.json<AcmeOrder>();
            this.log.debug({ requestId: state.requestId, order: state.orderUrl, status: after.status }, 'ACME order finalized');
            if (after.status === 'valid') return await this.download(state, after);
            if (after.status === 'invalid') return this.rejected(state, await this.whyInvalid(after));
            return this.pending(state, retryAfterOf(fin.header('retry-after')));
          }
          case 'pending': {
            const progress = await this.authorize(state, order);
            if (typeof progress === 'object') return this.rejected(state, progress.rejected);
            if (progress === 'all-valid') continue;
            return this.pending(state, retryAfter);
          }
          default:
            return this.pending(state, retryAfter);
        }
      }
      return this.pending(state);
    } catch (err) {
      return this.failure(err, state.requestId, state);
    }
  }

  /**
   * Accepts the configured challenge of every pending authorization. dns-01 is answered first: its TXT record
   * published through the DCV policy (and present at every authoritative server) before the challenge is accepted.
   * http-01 and tls-alpn-01 are not answered here: the CA validates what is in place (a pre-validated account, a
   * test CA that says yes).
   */
  private async authorize(state: OrderState, order: AcmeOrder): Promise<'all-valid' | 'waiting' | { rejected: string }> {
    let allValid = true;
    for (const url of order.authorizations ?? []) {
      const authz = (await this.signed(url, undefined)).json<AcmeAuthorization>();
      const name = authz.identifier?.value ?? url;
      if (authz.status === 'valid') continue;
      allValid = false;
      if (authz.status !== 'pending') {
        const failed = authz.challenges?.find((c) => c.error);
        return { rejected: `the authorization for ${name} is ${authz.status}${failed ? `: ${problemText(failed.error)}` : ''}` };
      }
      const challenge = authz.challenges?.find((c) => c.type === this.config.challengeType);
      if (!challenge) {
        const offered = (authz.challenges ?? []).map((c) => c.type).join(', ') || 'none';
        return { rejected: `the ACME CA offers no ${this.config.challengeType} challenge for ${name} (it offers ${offered})` };
      }
      if (challenge.status === 'pending') {
        if (challenge.type === 'dns-01') await this.publishDns01(state, authz, challenge);
        await this.signed(challenge.url, {});
        this.log.info({ requestId: state.requestId, identifier: name, challenge: challenge.type }, 'ACME challenge accepted');
      }
    }
    return allValid ? 'all-valid' : 'waiting';
  }

  /** Why an order is invalid: its error, else the first failed challenge of its authorizations. */
  private async whyInvalid(order: AcmeOrder): Promise<string> {
    if (order.error) return problemText(order.error);
    for (const url of order.authorizations ?? []) {
      try {
        const authz = (await this.signed(url, undefined)).json<AcmeAuthorization>();
        const failed = authz.challenges?.find((c) => c.error);
        if (authz.status !== 'valid') return `the authorization for ${authz.identifier?.value ?? url} is ${authz.status}${failed ? `: ${problemText(failed.error)}` : ''}`;
      } catch {
        // The explanation is best effort.
      }
    }
    return 'the ACME order is invalid';
  }

  private async download(state: OrderState, order: AcmeOrder): Promise<IssueOutcome> {
    if (!order.certificate) return this.pending(state);
    const res = await this.signed(order.certificate, undefined, 'application/pem-certificate-chain');
    const [leaf, ...chain] = splitCertificates(res.body.toString('utf8'));
    if (!leaf) throw new TransientError(`the certificate at ${order.certificate} holds no PEM certificate`);
    const cert = new X509Certificate(leaf);
    const csrKey = readCsr(Buffer.from(state.csr, 'base64url')).spki;
    if (!csrKey.equals(cert.publicKey.export({ type: 'spki', format: 'der' }))) {
      throw new PermanentError(`the certificate at ${order.certificate} is not for the CSR's key`);
    }
    state.issued = { certificatePem: leaf, chainPem: chain };
    await this.save(state);
    if (chain.length) await this.ctx.kv.set(this.key('chain'), chain);
    this.log.info({ requestId: state.requestId, order: state.orderUrl, serial: cert.serialNumber.toLowerCase() }, 'certificate issued by the ACME CA');
    return { status: 'issued', certificatePem: leaf, chainPem: [...chain] };
  }

  private async save(state: OrderState): Promise<void> {
    await this.ctx.kv.set(this.key('order', state.requestId), state, { ttlMs: ORDER_STATE_TTL_MS });
  }

  // ------------------------------------------------------------------------------------------------ dns-01

  /** RFC 8555 §8.4: base64url(SHA-256(keyAuthorization)), keyAuthorization = token || '.' || base64url(JWK thumbprint). */
  private async dns01Value(token: string): Promise<string> {
    const account = await this.ensureAccount();
    const thumbprint = await calculateJwkThumbprint(account.key.jwk, 'sha256');
    return createHash('sha256').update(`${token}.${thumbprint}`).digest('base64url');
  }

  /**
   * Publishes the dns-01 record of a challenge through the DCV policy (once: a challenge already published is not
   * written again). The record is in the order's state before the write, so that whatever happens next, it is
   * removed later. A DCV refusal (no such policy, a name it does not cover, the provisioner refusing, the record
   * not answered by every authoritative server in time) fails the request, naming the policy and the name; a
   * passing failure (a provisioner's TransientError) is retried by the kernel. Either way nothing is left in DNS.
   */
  private async publishDns01(state: OrderState, authz: AcmeAuthorization, challenge: AcmeChallenge): Promise<void> {
    const policy = this.config.dcvPolicy;
    const domain = dnsValue(authz.identifier.value).replace(/^\*\./, '');
    const shown = authz.wildcard ? `*.${domain}` : domain;
    if (!policy) throw new ConfigurationError(`config dcvPolicy is required to answer the dns-01 challenge for ${shown}`);
    const records = (state.dns01 ??= []);
    const known = records.find((r) => r.challengeUrl === challenge.url);
    if (known?.written) return;
    if (typeof challenge.token !== 'string' || !/^[A-Za-z0-9_-]+$/.test(challenge.token)) {
      throw new PermanentError(`the ACME CA's dns-01 challenge for ${shown} has no valid token`);
    }
    const requested: Omit<DnsRecord, 'zone'> = { fqdn: `_acme-challenge.${domain}`, type: 'TXT', value: await this.dns01Value(challenge.token), ttl: DNS01_TTL };
    const entry: Dns01Record = known ?? { challengeUrl: challenge.url, policy, domain, requested };
    if (!known) records.push(entry);
    await this.save(state);
    try {
      entry.written = await this.ctx.dcv.publish(policy, domain, requested);
    } catch (err) {
      const why = (err as Error)?.message ?? String(err);
      const message = `dns-01 for ${shown}: the record ${requested.fqdn} could not be published through the DCV policy "${policy}": ${why}`;
      this.log.warn({ requestId: state.requestId, identifier: shown, policy, fqdn: requested.fqdn }, message);
      // Perhaps written before the failure (propagation not seen in time): removed now. A passing failure keeps the
      // other records (their challenges may be in validation; the retry publishes this one again), a final one
      // removes them all (the request is over).
      if (isTransientError(err)) {
        await this.releaseDns01(state, 'publishing failed', entry);
        throw new TransientError(message, (err as TransientError).retryAfterSeconds, { cause: err });
      }
      await this.releaseDns01(state, 'publishing failed');
      throw new PermanentError(message, { cause: err });
    }
    await this.save(state);
    this.log.info({ requestId: state.requestId, identifier: shown, policy, fqdn: entry.written.fqdn, zone: entry.written.zone }, 'dns-01 record published');
  }

  /**
   * Removes the dns-01 records of the order, or only `only` (exactly its value: other values at the name stay). A
   * record whose removal fails stays in the state and is tried again at the next call for the request; removed
   * ones leave it.
   */
  private async releaseDns01(state: OrderState, why: string, only?: Dns01Record): Promise<void> {
    if (!state.dns01?.length) return;
    const left: Dns01Record[] = [];
    for (const entry of state.dns01) {
      if (only && entry !== only) {
        left.push(entry);
        continue;
      }
      // Not answered by publish (it failed, or the process stopped meanwhile): the value asked for, removed where
      // it was asked to be written (cleaning an absent value succeeds).
      const record: DnsRecord = entry.written ?? { ...entry.requested };
      try {
        await this.ctx.dcv.unpublish(entry.policy, entry.domain, record);
        this.log.info({ requestId: state.requestId, policy: entry.policy, fqdn: record.fqdn, why }, 'dns-01 record removed');
      } catch (err) {
        // A record never written under a policy that refuses the name: nothing to remove.
        if (!entry.written && !isTransientError(err)) continue;
        this.log.error({ requestId: state.requestId, policy: entry.policy, fqdn: record.fqdn, err: (err as Error)?.message ?? String(err) }, 'a dns-01 record could not be removed');
        left.push(entry);
      }
    }
    state.dns01 = left;
    await this.save(state);
  }

  /** An ACME error as an outcome (the CA refused) or a typed error (retry, reconfigure). */
  private failure(err: unknown, requestId: string, state?: OrderState): IssueOutcome {
    if (err instanceof AcmeProblem) {
      if (err.short === 'orderNotReady' && state) return this.pending(state, err.retryAfterSeconds);
      if (isTransient(err)) throw new TransientError(`ACME ${err.url}: ${err.message}`, err.retryAfterSeconds);
      if (CONFIGURATION_PROBLEMS.has(err.short)) throw new ConfigurationError(`ACME ${err.url}: ${err.message}`);
      this.log.info({ requestId, url: err.url, problem: err.type, status: err.status }, 'the ACME CA refused the request');
      return { status: 'rejected', reason: err.message };
    }
    if (err instanceof PluginError) throw err;
    throw new TransientError(`ACME request ${requestId} failed: ${(err as Error)?.message ?? String(err)}`, undefined, { cause: err });
  }

  /** Calls for one request id run one after the other (a retry overlapping a slow call reuses its order). */
  private async serialized<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.inFlight.get(id) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(fn);
    this.inFlight.set(id, run);
    try {
      return await run;
    } finally {
      if (this.inFlight.get(id) === run) this.inFlight.delete(id);
    }
  }
}
