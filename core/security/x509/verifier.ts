import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { ClientCertificate, ClientCertificateVerdict, ClientCertificatesFacade } from '@certwright/sdk';
import { pemBlocks } from '../../pki/input.js';
import { parseCertificate } from '../../pki/x509/parse.js';
import type { CertificateInfo } from '../../pki/x509/model.js';
import type { PkiServices } from '../../pki/cas/services.js';
import type { CaRecord } from '../../pki/cas/store.js';
import { applyQuery, parseQuery } from '../../query/index.js';
import { CERTIFICATE_LANGUAGE } from '../../inventory/language.js';

export interface ClientCertificateDeps {
  knex: Knex;
  clock: () => number;
  logger: Logger;
  /** The kernel's CA, trust chain and CRL cache services (read at call time: they are created later in the boot). */
  pki: () => PkiServices;
  /** How long an OCSP responder may take (ms). */
  ocspTimeoutMs?: number;
  /** OCSP requests go through this (the kernel routes it through the egress proxies; default: global fetch). */
  fetch?: typeof fetch;
}

/** Why a certificate is refused: stable codes (the failure events carry them). */
export type RefusalReason =
  | 'unreadable'
  | 'not-yet-valid'
  | 'expired'
  | 'no-client-auth-eku'
  | 'untrusted-ca'
  | 'invalid-chain'
  | 'revoked'
  | 'ocsp-unknown'
  | 'ocsp-unavailable';

const CLIENT_AUTH = 'clientAuth';
const THUMBPRINT = /^[0-9a-f]{40}$/i;

/** The certificate as plugins read it: names and dates, the SAN values by kind. */
export function describe(info: CertificateInfo): ClientCertificate {
  const san = (kind: string) => info.subjectAlternateNames.filter((s) => s.sanType === kind).map((s) => s.value);
  return {
    pem: info.pem,
    subjectDn: info.dn,
    issuerDn: info.issuer,
    serial: info.serial,
    thumbprint: info.thumbprint,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    emails: san('RFC822NAME'),
    upns: san('OTHERNAME_UPN'),
    dnsNames: san('DNSNAME'),
  };
}

/**
 * X509 login's certificate checks (spec "Authentication", X509 certificate): the clientAuth extended key usage,
 * the validity period, a path to the imported CA that issued it flagged trusted for client authentication (the
 * trust service's forClientAuth, which asks the CRL cache about each link), and, when that CA names an OCSP
 * responder, the responder's answer. What plugins get as ctx.clientCertificates.
 */
export class ClientCertificateVerifier implements ClientCertificatesFacade {
  private readonly ocspCache = new LRUCache<string, 'good' | 'revoked' | 'unknown'>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: ClientCertificateDeps) {}

  async verify(pem: string, tenant = 'default'): Promise<ClientCertificateVerdict> {
    let blocks: { label: string; der: Uint8Array }[];
    let info: CertificateInfo;
    try {
      blocks = pemBlocks(pem).filter((b) => b.label === 'CERTIFICATE');
      if (blocks.length === 0) return { ok: false, reason: 'unreadable', detail: 'no PEM certificate' };
      info = parseCertificate(blocks[0]!.der);
    } catch (err) {
      return { ok: false, reason: 'unreadable', detail: (err as Error).message };
    }
    const certificate = describe(info);
    const refuse = (reason: RefusalReason, detail?: string): ClientCertificateVerdict => ({ ok: false, reason, certificate, ...(detail ? { detail } : {}) });
    const now = this.deps.clock();
    if (info.notBefore > now) return refuse('not-yet-valid', `valid from ${new Date(info.notBefore).toISOString()}`);
    if (info.notAfter < now) return refuse('expired', `expired ${new Date(info.notAfter).toISOString()}`);
    const eku = info.extensions.extendedKeyUsage?.usages ?? [];
    if (!eku.includes(CLIENT_AUTH)) return refuse('no-client-auth-eku', eku.length ? `extended key usages: ${eku.join(', ')}` : 'no extended key usage extension');

    const pki = this.deps.pki();
    const { accepted, ca, chain } = await pki.trust.forClientAuth(tenant, blocks[0]!.der, blocks.slice(1).map((b) => b.der));
    if (!accepted) {
      const problems = chain.path.flatMap((link) => link.problems.map((p) => ({ ...p, dn: link.certificate.dn })));
      const revoked = problems.find((p) => p.code === 'revoked');
      if (revoked) return refuse('revoked', revoked.message);
      const issuer = ca === null ? undefined : await pki.caStore.byName(tenant, ca);
      if (!issuer) return refuse('untrusted-ca', `the issuer ${info.issuer} is not an imported CA`);
      if (!issuer.trustedForClientAuth) return refuse('untrusted-ca', `the CA ${issuer.name} is not trusted for client authentication`);
      return refuse('invalid-chain', problems.map((p) => `${p.dn}: ${p.code}`).join('; ') || 'no valid path');
    }
    const issuer = ca === null ? undefined : await pki.caStore.byName(tenant, ca);
    if (issuer?.ocspUrl) {
      const status = await this.ocsp(issuer, info, blocks[0]!.der);
      if (status === 'revoked') return refuse('revoked', `OCSP responder ${issuer.ocspUrl}: revoked`);
      if (status === 'unknown') return refuse('ocsp-unknown', `OCSP responder ${issuer.ocspUrl}: unknown certificate`);
      if (status === 'unavailable') return refuse('ocsp-unavailable', `OCSP responder ${issuer.ocspUrl} gave no usable answer`);
    }
    return { ok: true, certificate };
  }

  async matchesQuery(certificate: string, query: string, tenant = 'default'): Promise<boolean> {
    const ast = parseQuery(query, CERTIFICATE_LANGUAGE);
    let thumbprint: string;
    if (THUMBPRINT.test(certificate.trim())) thumbprint = certificate.trim().toLowerCase();
    else {
      const block = pemBlocks(certificate).find((b) => b.label === 'CERTIFICATE');
      if (!block) throw new TypeError('matchesQuery: neither a PEM certificate nor a SHA-1 thumbprint');
      thumbprint = parseCertificate(block.der).thumbprint;
    }
    const { knex } = this.deps;
    const table = CERTIFICATE_LANGUAGE.table;
    const qb = knex(table).select(`${table}.id`).where(`${table}.tenant`, tenant).andWhere(`${table}.thumbprint`, thumbprint).first();
    qb.andWhere((inner) => void applyQuery(inner, ast, CERTIFICATE_LANGUAGE, { knex, now: this.deps.clock(), table, tenant }));
    return (await qb) !== undefined;
  }

  queryProblem(query: string): string | null {
    try {
      parseQuery(query, CERTIFICATE_LANGUAGE);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** The responder's word on the certificate (signed by the CA or a responder it delegated to), cached a minute. */
  private async ocsp(issuer: CaRecord, info: CertificateInfo, der: Uint8Array): Promise<'good' | 'revoked' | 'unknown' | 'unavailable'> {
    const key = `${issuer.id}\u0000${info.thumbprints.sha256}`;
    const cached = this.ocspCache.get(key);
    if (cached) return cached;
    try {
      const leaf = pkijs.Certificate.fromBER(der);
      const issuerDer = pemBlocks(issuer.certificate)[0]!.der;
      const issuerCert = pkijs.Certificate.fromBER(issuerDer);
      const request = new pkijs.OCSPRequest();
      await request.createForCertificate(leaf, { hashAlgorithm: 'SHA-1', issuerCertificate: issuerCert });
      const body = request.toSchema(true).toBER(false);
      const res = await (this.deps.fetch ?? fetch)(issuer.ocspUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
        body: Buffer.from(body),
        signal: AbortSignal.timeout(this.deps.ocspTimeoutMs ?? 5000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const parsed = asn1js.fromBER(bytes);
      if (parsed.offset === -1) throw new Error('not DER');
      const response = new pkijs.OCSPResponse({ schema: parsed.result });
      if (response.responseStatus.valueBlock.valueDec !== 0 || !response.responseBytes) throw new Error(`response status ${response.responseStatus.valueBlock.valueDec}`);
      const basicAsn = asn1js.fromBER(response.responseBytes.response.valueBlock.valueHexView);
      const basic = new pkijs.BasicOCSPResponse({ schema: basicAsn.result });
      if (!(await basic.verify({ trustedCerts: [issuerCert] }))) throw new Error('the response signature does not verify');
      const { status } = await response.getCertificateStatus(leaf, issuerCert);
      const verdict = status === 0 ? 'good' : status === 1 ? 'revoked' : 'unknown';
      this.ocspCache.set(key, verdict);
      return verdict;
    } catch (err) {
      this.deps.logger.warn({ ca: issuer.name, responder: issuer.ocspUrl, err: (err as Error).message }, 'OCSP check of a client certificate failed');
      return 'unavailable';
    }
  }
}
