/**
 * The local CA connector. Per instance (by name) a root and an issuing CA are created on first use with
 * ctx.pki, their keys sealed with ctx.secrets (aad naming the instance and the role) and stored with
 * kv.setIfAbsent, so nodes racing to create them keep one CA (the loser drops its keys). The issuing
 * CA's signer is opened once and kept: an issuance is a CSR check, a TBSCertificate and one signature,
 * then one setIfAbsent that makes it idempotent by request id.
 */
import { createHash, X509Certificate } from 'node:crypto';
import {
  PermanentError,
  type CaSigner,
  type IssueOutcome,
  type IssueRequest,
  type IssueTemplate,
  type PkiConnector,
  type PluginContext,
  type PluginInstance,
  type RevocationSource,
  type RevokeRequest,
} from '@certwright/sdk';
import { readConfig, type LocalCaConfig } from './config.js';

const DAY_MS = 86_400_000;
/**
 * How long the record that makes an issuance idempotent by request id is kept (kv ttlMs). A retry comes only
 * while the request's queue item lives (a crash between the answer and Certwright's write, or a node that lost
 * its lease), minutes in practice; past this a retry would sign afresh. Without an expiry there would be one
 * row per certificate ever issued.
 */
const ISSUED_RECORD_TTL_MS = 30 * DAY_MS;

/** What kv `ca:<instance>` holds: certificates in PEM, private keys sealed. */
export interface StoredCa {
  keyType: string;
  createdAt: number;
  root: { certificatePem: string; sealedKey: string };
  issuing: { certificatePem: string; sealedKey: string };
}

interface OpenCa {
  stored: StoredCa;
  signer: CaSigner;
  issuing: X509Certificate;
  /** Epoch ms: no certificate outlives the issuing CA. */
  issuingNotAfter: number;
  chain: string[];
}

/** The last CRL signed by this node, reused while the revoked list is unchanged and it is fresh enough. */
interface CachedCrl {
  fingerprint: string;
  thisUpdate: number;
  der: Uint8Array;
}

export class LocalCaConnector implements PkiConnector {
  private readonly config: LocalCaConfig;
  private ca: Promise<OpenCa> | undefined;
  private crlCache: CachedCrl | undefined;
  private crlQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly ctx: PluginContext, private readonly instance: PluginInstance) {
    this.config = readConfig(instance.name, instance.config);
  }

  private get name(): string {
    return this.instance.name;
  }

  private aad(role: 'root' | 'issuing'): string {
    return `local-ca:${this.name}:${role}`;
  }

  /** The CA, opened once (created first when the instance has none). A failure is retried on the next call. */
  private materials(): Promise<OpenCa> {
    this.ca ??= this.open().catch((err: unknown) => {
      this.ca = undefined;
      throw err;
    });
    return this.ca;
  }

  private async open(): Promise<OpenCa> {
    const key = `ca:${this.name}`;
    let stored = await this.ctx.kv.get<StoredCa>(key);
    if (!stored) {
      const mine = this.create();
      stored = await this.ctx.kv.setIfAbsent(key, mine);
      if (stored.issuing.certificatePem !== mine.issuing.certificatePem) this.ctx.logger.info({ connector: this.name }, 'local CA created by another node: keeping its CA');
      else this.ctx.logger.info({ connector: this.name, keyType: mine.keyType }, 'local CA created');
    }
    let issuingKeyPem: string;
    try {
      issuingKeyPem = this.ctx.secrets.open(stored.issuing.sealedKey, this.aad('issuing'));
    } catch (err) {
      throw new PermanentError(`the issuing CA key of ${this.name} cannot be opened (master key changed?)`, { cause: err });
    }
    const issuing = new X509Certificate(stored.issuing.certificatePem);
    return {
      stored,
      signer: this.ctx.pki.signer(stored.issuing.certificatePem, issuingKeyPem),
      issuing,
      issuingNotAfter: Date.parse(issuing.validTo),
      chain: [stored.issuing.certificatePem, stored.root.certificatePem],
    };
  }

  /** A new root and issuing CA (not yet stored). */
  private create(): StoredCa {
    const { pki, secrets, clock } = this.ctx;
    const c = this.config;
    const now = clock.now();
    const rootKey = pki.generateKey(c.keyType);
    const rootNotAfter = now + c.rootValidityDays * DAY_MS;
    const root = pki.selfSigned(rootKey.privateKeyPem, {
      subject: c.rootSubject,
      notBefore: now,
      notAfter: rootNotAfter,
      basicConstraints: { ca: true },
      keyUsage: ['keyCertSign', 'cRLSign'],
    });
    const issuingKey = pki.generateKey(c.keyType);
    const issuing = pki.signer(root.certificatePem, rootKey.privateKeyPem).issueForPublicKey(issuingKey.publicKeyPem, {
      subject: c.issuingSubject,
      notBefore: now,
      notAfter: Math.min(rootNotAfter, now + c.issuingValidityDays * DAY_MS),
      basicConstraints: { ca: true, pathLength: 0 },
      keyUsage: ['keyCertSign', 'cRLSign'],
    });
    return {
      keyType: c.keyType,
      createdAt: now,
      root: { certificatePem: root.certificatePem, sealedKey: secrets.seal(rootKey.privateKeyPem, this.aad('root')) },
      issuing: { certificatePem: issuing.certificatePem, sealedKey: secrets.seal(issuingKey.privateKeyPem, this.aad('issuing')) },
    };
  }

  async getCaChain(): Promise<string[]> {
    return [...(await this.materials()).chain];
  }

  async issue(request: IssueRequest): Promise<IssueOutcome> {
    const ca = await this.materials();
    const template = this.templateFor(request, ca);
    let certificatePem: string;
    try {
      certificatePem = ca.signer.issue(request.csrPem, template).certificatePem;
    } catch (err) {
      if (err instanceof PermanentError) return { status: 'rejected', reason: err.message };
      throw err;
    }
    // A retry (after a crash between our answer and Certwright's write) answers the first certificate.
    const stored = await this.ctx.kv.setIfAbsent(`issued:${this.name}:${request.requestId}`, certificatePem, { ttlMs: ISSUED_RECORD_TTL_MS });
    return { status: 'issued', certificatePem: stored, chainPem: [...ca.chain] };
  }

  private templateFor(request: IssueRequest, ca: OpenCa): IssueTemplate {
    const now = this.ctx.clock.now();
    // Never beyond the issuing CA's own validity.
    const notAfter = Math.min(now + (request.validityDays ?? 365) * DAY_MS, ca.issuingNotAfter);
    const template: IssueTemplate = { notBefore: now, notAfter };
    if (request.subject !== undefined) template.subject = request.subject;
    if (request.sans !== undefined) template.sans = request.sans.map((s) => ({ sanType: s.type, value: s.value }));
    if (request.keyUsage !== undefined) template.keyUsage = request.keyUsage;
    if (request.extendedKeyUsage !== undefined) template.extendedKeyUsage = request.extendedKeyUsage;
    const urls = request.publication;
    if (urls) {
      template.crlDistributionPoints = [urls.crlUrl];
      template.ocsp = [urls.ocspUrl];
      template.caIssuers = [urls.caIssuersUrl];
    }
    return template;
  }

  poll(): Promise<IssueOutcome> {
    return Promise.reject(new PermanentError('the local CA answers at once: there is nothing to poll'));
  }

  /** Revocation state lives in Certwright's inventory: this only checks the certificate is one of ours. */
  async revoke(request: RevokeRequest): Promise<void> {
    const ca = await this.materials();
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(request.certificatePem);
    } catch {
      throw new PermanentError('the certificate to revoke is unreadable');
    }
    if (!cert.checkIssued(ca.issuing) || !cert.verify(ca.issuing.publicKey)) throw new PermanentError(`the certificate was not issued by the local CA ${this.name}`);
  }

  async testConnection(): Promise<{ ok: boolean; detail?: string }> {
    try {
      const ca = await this.materials();
      return { ok: true, detail: `issuing CA ${ca.issuing.subject.replace(/\n/g, ', ')} (${ca.stored.keyType}), valid until ${new Date(ca.issuing.validTo).toISOString()}` };
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * The current CRL (DER). A new one, with the next CRL number, when the revoked list changed or the last
   * one is past half its validity; calls are serialised so numbers only grow on this node, and the counter
   * in kv (kv.increment, atomic) keeps them growing across restarts and never hands two nodes one number.
   */
  crl(source: RevocationSource): Promise<Uint8Array> {
    const next = this.crlQueue.then(() => this.signCrl(source));
    this.crlQueue = next.catch(() => undefined);
    return next;
  }

  private async signCrl(source: RevocationSource): Promise<Uint8Array> {
    const ca = await this.materials();
    const entries = (await source.revoked()).map((e) => ({ serial: e.serial.toLowerCase().replace(/^0+(?=.)/, ''), revokedAt: e.revokedAt, ...(e.reason ? { reason: e.reason } : {}) }));
    entries.sort((a, b) => (a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0));
    const fingerprint = createHash('sha256').update(JSON.stringify(entries)).digest('hex');
    const now = this.ctx.clock.now();
    const validityMs = this.config.crlValidityHours * 3_600_000;
    const cached = this.crlCache;
    if (cached && cached.fingerprint === fingerprint && now - cached.thisUpdate < validityMs / 2 && now >= cached.thisUpdate) return cached.der;
    const counterKey = `crl-number:${this.name}`;
    const crlNumber = await this.ctx.kv.increment(counterKey);
    const der = ca.signer.crl({ entries, thisUpdate: now, nextUpdate: now + validityMs, crlNumber });
    this.crlCache = { fingerprint, thisUpdate: now, der };
    return der;
  }

  async ocsp(requestDer: Uint8Array, source: RevocationSource): Promise<Uint8Array> {
    const ca = await this.materials();
    return ca.signer.ocsp(requestDer, (serial) => source.status(serial), { validitySeconds: this.config.ocspValiditySeconds });
  }
}
