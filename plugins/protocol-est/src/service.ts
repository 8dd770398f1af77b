/**
 * What the EST routes do, framed in EST terms: the profile's CA certificates, and enrollment and
 * re-enrollment through ctx.enrollment (the request workflow) with the profile's authentication methods.
 * A request that waits for an approver is remembered by its CSR, so the client's retry (RFC 7030 §4.2.3,
 * the same CSR posted again) reads that request instead of making another.
 */
import { X509Certificate } from 'node:crypto';
import { degenerateCertsOnly, pemCertificatesToDer, type EnrollmentFacade, type EnrollmentOutcome, type EnrollmentRefusal, type EventsFacade, type LocalAccountsFacade, type PluginDatabase, type ProtocolProfile } from '@certwright/sdk';
import { keepsSubject, subjectOfCertificate, type EstCsr } from './csr.js';
import { EST_ERRORS, EstError } from './errors.js';

const TENANT = 'default';
const METHODS = ['basic', 'challenge', 'certificate'] as const;
type Method = (typeof METHODS)[number];
/** Refusals that mean the challenge itself is wrong (unknown, expired, spent): 401 like a bad password. */
const CHALLENGE_REFUSALS = new Set(['CHAL-003', 'CHAL-006', 'CHAL-007']);

export interface EstCredentials {
  basic?: { user: string; password: string };
  /** The TLS client certificate (PEM), when the client presented one. */
  clientCertificatePem?: string;
  /** The client's address: failed Basic checks are throttled per address. */
  remoteAddress?: string;
}

export type EstAnswer = { kind: 'issued'; body: string } | { kind: 'pending'; retryAfterSeconds: number };

interface Settings {
  methods: Set<Method>;
  accounts: string[] | null;
  allowSubjectChange: boolean;
}

export class EstService {
  constructor(
    private readonly deps: {
      enrollment: EnrollmentFacade;
      localAccounts: LocalAccountsFacade;
      db: PluginDatabase;
      events: EventsFacade;
      now: () => number;
      retryAfterSeconds: number;
    },
  ) {}

  async profile(name: string): Promise<ProtocolProfile> {
    const profile = await this.deps.enrollment.profile('est', name, TENANT);
    if (!profile) throw EST_ERRORS.noProfile(name);
    return profile;
  }

  /** /cacerts: the profile's CA chain as a certs-only PKCS#7, base64 on one line. */
  async cacerts(name: string): Promise<string> {
    const profile = await this.profile(name);
    const chain = await this.deps.enrollment.caChain(profile.name, TENANT);
    if (chain.length === 0) throw new EstError(503, 'EST-011', 'The profile\'s CA certificates are not available');
    return Buffer.from(degenerateCertsOnly(pemCertificatesToDer(chain))).toString('base64');
  }

  async enroll(name: string, csr: EstCsr, credentials: EstCredentials): Promise<EstAnswer> {
    const profile = await this.profile(name);
    const known = await this.known(profile.name, csr);
    if (known) return known;
    const settings = settingsOf(profile);
    const basic = credentials.basic;
    if (basic && settings.methods.has('basic')) {
      const account = await this.deps.localAccounts.verify(TENANT, basic.user, basic.password, { remoteAddress: credentials.remoteAddress });
      if (account) {
        if (settings.accounts && !settings.accounts.includes(account.identifier)) throw new EstError(403, 'EST-012', `Local account ${account.identifier} may not enroll on this profile`);
        return this.submitted(profile.name, csr, account.identifier, await this.deps.enrollment.enroll({ protocol: 'est', profile: profile.name, csrPem: csr.pem, requester: account.identifier, tenant: TENANT }));
      }
    }
    const challenge = basic?.password || csr.challengePassword;
    if (challenge && settings.methods.has('challenge')) {
      const outcome = await this.deps.enrollment.consumeChallenge(challenge, csr.pem, TENANT, { protocol: 'est', profile: profile.name });
      if ('refused' in outcome && CHALLENGE_REFUSALS.has(outcome.code)) throw EST_ERRORS.badCredentials();
      return this.submitted(profile.name, csr, 'est:challenge', outcome);
    }
    if (credentials.clientCertificatePem && settings.methods.has('certificate')) {
      const holder = await this.currentCertificate(credentials.clientCertificatePem);
      return this.submitted(profile.name, csr, holder.requester, await this.deps.enrollment.enroll({ protocol: 'est', profile: profile.name, csrPem: csr.pem, requester: holder.requester, tenant: TENANT }));
    }
    throw basic || challenge ? EST_ERRORS.badCredentials() : EST_ERRORS.unauthenticated();
  }

  /**
   * /simplereenroll: only the holder of the certificate being renewed — its TLS client certificate, or, without
   * one (a TLS-terminating proxy, a client without client authentication), a CSR signed by the certificate's own
   * key: the CSR's key finds the certificate in the inventory, and the workflow refuses a CSR whose signature
   * does not verify before anything is written.
   */
  async reenroll(name: string, csr: EstCsr, credentials: EstCredentials): Promise<EstAnswer> {
    const profile = await this.profile(name);
    const known = await this.known(profile.name, csr);
    if (known) return known;
    const currentPem = credentials.clientCertificatePem ?? (await this.sameKeyCertificate(profile.name, csr));
    const holder = await this.currentCertificate(currentPem);
    if (holder.profile !== profile.name) throw EST_ERRORS.reenrollCertificate(`it belongs to another profile`);
    if (!settingsOf(profile).allowSubjectChange && !keepsSubject(holder.subject, csr.subject)) throw EST_ERRORS.subjectChange();
    const outcome = await this.deps.enrollment.renew({ protocol: 'est', certificatePem: currentPem, csrPem: csr.pem, requester: holder.requester, tenant: TENANT });
    return this.submitted(profile.name, csr, holder.requester, outcome);
  }

  /** The profile's certificate in force of the CSR's own key (a same-key renewal), else EST-007. */
  private async sameKeyCertificate(profile: string, csr: EstCsr): Promise<string> {
    const found = (await this.deps.enrollment.certificatesByPublicKey(csr.publicKeyThumbprint, TENANT)).find((c) => c.profile === profile);
    if (!found) throw EST_ERRORS.reenrollCertificate('none was presented, and no certificate of this profile has the CSR\'s key');
    return found.certificatePem;
  }

  /** The client certificate as an authenticator: ours (in the inventory), in force, not revoked. */
  private async currentCertificate(pem: string): Promise<{ requester: string; profile: string | null; subject: string[] }> {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(pem);
    } catch {
      throw EST_ERRORS.reenrollCertificate('it does not parse');
    }
    const now = this.deps.now();
    if (Date.parse(x509.validTo) <= now || Date.parse(x509.validFrom) > now) throw EST_ERRORS.reenrollCertificate('it is not in force');
    const found = await this.deps.enrollment.certificate(pem, TENANT);
    if (!found) throw EST_ERRORS.reenrollCertificate('it was not issued here');
    if (found.revoked) throw EST_ERRORS.reenrollCertificate('it is revoked');
    return { requester: `est:certificate:${found.id}`, profile: found.profile, subject: subjectOfCertificate(x509.raw) };
  }

  /** A CSR already submitted (a client polling after 202): that request's state. */
  private async known(profile: string, csr: EstCsr): Promise<EstAnswer | null> {
    const row = (await this.deps.db('est_requests').where({ tenant: TENANT, profile, csr_hash: csr.hash }).first()) as { request_id: string } | undefined;
    if (!row) return null;
    const outcome = await this.deps.enrollment.request(row.request_id, TENANT);
    if (!outcome) return null;
    return this.answerOf(outcome);
  }

  private async submitted(profile: string, csr: EstCsr, requester: string, outcome: EnrollmentOutcome | EnrollmentRefusal): Promise<EstAnswer> {
    if ('refused' in outcome) throw EST_ERRORS.refused(outcome.code, outcome.message);
    const answer = this.answerOf(outcome);
    if (answer.kind === 'pending') {
      // Remembered so that the retry finds it; a concurrent duplicate keeps the first.
      await this.deps.db('est_requests')
        .insert({ tenant: TENANT, profile, csr_hash: csr.hash, request_id: outcome.requestId, requester, created_at: this.deps.now() })
        .onConflict(['tenant', 'profile', 'csr_hash'])
        .ignore();
    }
    return answer;
  }

  private answerOf(outcome: EnrollmentOutcome): EstAnswer {
    if (outcome.status === 'completed' && outcome.certificatePem) {
      return { kind: 'issued', body: Buffer.from(degenerateCertsOnly(pemCertificatesToDer([outcome.certificatePem]))).toString('base64') };
    }
    if (outcome.status === 'pending' || outcome.status === 'approved') return { kind: 'pending', retryAfterSeconds: this.deps.retryAfterSeconds };
    throw EST_ERRORS.denied(outcome.error ?? outcome.status);
  }

  /** Every refused EST call leaves an event (who, which profile, the EST code), never the credentials. */
  async failed(profile: string | null, operation: string, err: EstError, remoteAddress: string | undefined): Promise<void> {
    await this.deps.events.append({
      code: 'EST-REQUEST-FAILED',
      module: 'est',
      status: 'failure',
      objectType: 'profile',
      objectId: profile,
      payload: { profile, operation, status: err.status, code: err.code, error: err.message, remoteAddress: remoteAddress ?? null },
    });
  }
}

function settingsOf(profile: ProtocolProfile): Settings {
  const s = profile.settings;
  const methods = Array.isArray(s.authentication) ? s.authentication.filter((m): m is Method => (METHODS as readonly string[]).includes(m as string)) : [...METHODS];
  return {
    methods: new Set(methods),
    accounts: Array.isArray(s.accounts) ? s.accounts.filter((a): a is string => typeof a === 'string') : null,
    allowSubjectChange: s.allowSubjectChange === true,
  };
}
