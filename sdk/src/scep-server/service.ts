/**
 * What the SCEP routes do (RFC 8894), in SCEP terms: capabilities, the RA and CA certificates, and
 * PKIOperation — a signed, enveloped request answered by a CertRep signed by the profile's RA. Issuance goes
 * through ctx.enrollment; a transactionID stays bound to the key that first used it, so polls and resends
 * read the same request. A message we cannot even read answers HTTP 400 (there is nobody to address a
 * CertRep to); anything after that answers a CertRep FAILURE with its failInfo.
 */
import { createHash, timingSafeEqual, X509Certificate } from 'node:crypto';
import { degenerateCertsOnly, pemCertificatesToDer } from '../cms/certs-only.js';
import type { EventsFacade, LocalAccountsFacade, PluginDatabase } from '../context.js';
import type { EnrollmentFacade, EnrollmentOutcome, EnrollmentRefusal, ProtocolProfile } from '../contracts/enrollment.js';
import { buildCertRep, challengePasswordOf, openEnvelope, parsePkiMessage, readIssuerAndSerial, ScepError, type FailInfo, type PkiMessage } from '../scep/index.js';
import * as pkijs from 'pkijs';
import type { RaStore } from './ra.js';
import { allowedCiphers, allowedDigests, capabilities, scepSettings, type ScepSettings } from './settings.js';

const TENANT = 'default';
const CHALLENGE_REFUSALS = new Set(['CHAL-003', 'CHAL-006', 'CHAL-007']);

export class ScepHttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 413 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A refusal answered as CertRep FAILURE, with what the event records (hooks throw it too). */
export class ScepRefusal extends Error {
  constructor(
    readonly failInfo: FailInfo,
    message: string,
  ) {
    super(message);
  }
}

/** What a PKCSReq hook gets: the profile, its settings, the request and its challengePassword. */
export interface PkcsReqInput {
  profile: ProtocolProfile;
  settings: ScepSettings;
  message: PkiMessage;
  csrDer: Buffer;
  csrPem: string;
  challenge: string | undefined;
}

/** How a flavour of SCEP (plain, Intune, Jamf) differs: who authorizes a PKCSReq, who hears of its outcome. */
export interface ScepHooks {
  /** Authorizes and submits a PKCSReq (throw ScepRefusal to refuse). Default: the profile's challenge, one-time or static. */
  pkcsReq?(input: PkcsReqInput): Promise<EnrollmentOutcome | EnrollmentRefusal>;
  /** After a PKCSReq's answer (SUCCESS, PENDING or FAILURE), e.g. to notify an MDM; its errors are logged, never answered. */
  answered?(input: PkcsReqInput, answer: { status: 'SUCCESS' | 'PENDING' | 'FAILURE'; certificateDer?: Uint8Array; reason?: string }): Promise<void>;
}

export interface ScepServiceOptions {
  /** The protocol (the profile's `protocols.<protocol>`, the requests' module): scep, mdm. */
  protocol: string;
  /** The plugin's transactions table (columns of protocol-scep's migration). */
  transactionsTable: string;
  enrollment: EnrollmentFacade;
  localAccounts: LocalAccountsFacade;
  db: PluginDatabase;
  events: EventsFacade;
  ra: RaStore;
  now: () => number;
  hooks?: ScepHooks;
  onHookError?: (err: unknown) => void;
}

type Answer = { status: 'SUCCESS'; certificatesDer: Uint8Array[] } | { status: 'SUCCESS'; crlDer: Uint8Array } | { status: 'PENDING' } | { status: 'FAILURE'; failInfo: FailInfo; reason: string };

export class ScepService {
  constructor(private readonly deps: ScepServiceOptions) {}

  async profile(name: string): Promise<{ profile: ProtocolProfile; settings: ScepSettings }> {
    const profile = await this.deps.enrollment.profile(this.deps.protocol, name, TENANT);
    if (!profile) throw new ScepHttpError(404, 'SCEP-004', `No ${this.deps.protocol.toUpperCase()} service for profile ${name.slice(0, 191)}`);
    return { profile, settings: scepSettings(profile) };
  }

  async capabilities(name: string): Promise<string> {
    return capabilities((await this.profile(name)).settings);
  }

  /** GetCACert: the RA and the CA chain (x-x509-ca-ra-cert); RFC 8894 §4.2.1.2. */
  async caCertificates(name: string): Promise<{ contentType: string; body: Buffer }> {
    const { profile } = await this.profile(name);
    const ra = await this.ra(profile.name);
    const certificates = [ra.certificateDer, ...pemCertificatesToDer(ra.chain)];
    return { contentType: 'application/x-x509-ca-ra-cert', body: Buffer.from(degenerateCertsOnly(certificates)) };
  }

  async raCertificate(name: string): Promise<Buffer> {
    const { profile } = await this.profile(name);
    return Buffer.from((await this.ra(profile.name)).certificateDer);
  }

  /** mscep_admin: a fresh one-time challenge for a local account allowed on the profile (NDES's page). */
  async adminPage(name: string, authorization: string | string[] | undefined, remoteAddress?: string): Promise<string> {
    const { profile, settings } = await this.profile(name);
    const basic = basicOf(authorization);
    if (!basic) throw new ScepHttpError(401, 'SCEP-005', 'HTTP Basic authentication with a local account is required');
    const account = await this.deps.localAccounts.verify(TENANT, basic.user, basic.password, { remoteAddress });
    if (!account) throw new ScepHttpError(401, 'SCEP-006', 'The credentials are not valid');
    if (settings.adminAccounts && !settings.adminAccounts.includes(account.identifier)) throw new ScepHttpError(403, 'SCEP-007', `Local account ${account.identifier} may not obtain challenges on this profile`);
    const issued = await this.issueChallenge(profile.name, account.identifier);
    if ('refused' in issued) throw new ScepHttpError(403, 'SCEP-008', `${issued.code}: ${issued.message}`);
    return ndesPage(issued.challenge, issued.expiresAt);
  }

  /** PKIOperation: the CertRep (DER) answering the message. */
  async pkiOperation(name: string, der: Buffer, remoteAddress?: string): Promise<Buffer> {
    const { profile, settings } = await this.profile(name);
    let message: PkiMessage;
    try {
      message = parsePkiMessage(new Uint8Array(der));
    } catch (err) {
      throw new ScepHttpError(400, 'SCEP-002', `The message is not an SCEP pkiMessage: ${(err as Error).message}`);
    }
    const ra = await this.ra(profile.name);
    let answer: Answer;
    try {
      answer = await this.answer(profile, settings, message, ra);
    } catch (err) {
      if (err instanceof ScepRefusal) answer = { status: 'FAILURE', failInfo: err.failInfo, reason: err.message };
      else if (err instanceof ScepError) answer = { status: 'FAILURE', failInfo: err.failInfo, reason: err.message };
      else throw err;
    }
    if (answer.status === 'FAILURE') await this.failed(profile.name, message.messageType, `failInfo ${answer.failInfo}`, answer.reason, remoteAddress, message.transactionId).catch(() => undefined);
    // Answered with the client's own algorithms, or AES-256 / SHA-256 when it chose one we refused.
    const digest = allowedDigests(settings).includes(message.digestAlgorithm) ? message.digestAlgorithm : 'sha256';
    const cipher = message.contentEncryption && allowedCiphers(settings).includes(message.contentEncryption) ? message.contentEncryption : 'aes-256-cbc';
    return Buffer.from(
      buildCertRep({
        pkiStatus: answer.status,
        ...(answer.status === 'FAILURE' ? { failInfo: answer.failInfo, failInfoText: answer.reason.slice(0, 255) } : {}),
        transactionId: message.transactionId,
        recipientNonce: message.senderNonce,
        digest: digest as 'sha1' | 'sha256' | 'sha512',
        signerCertificatePem: ra.certificatePem,
        signerPrivateKey: ra.privateKey,
        recipientCertificateDer: message.signerCertificateDer,
        cipher: cipher as 'aes-256-cbc',
        ...('certificatesDer' in answer ? { certificatesDer: answer.certificatesDer } : {}),
        ...('crlDer' in answer ? { crlDer: answer.crlDer } : {}),
      }),
    );
  }

  private async answer(profile: ProtocolProfile, settings: ScepSettings, message: PkiMessage, ra: Awaited<ReturnType<RaStore['get']>>): Promise<Answer> {
    if (!message.signatureValid) throw new ScepRefusal('badMessageCheck', 'The message signature does not verify');
    if (!allowedDigests(settings).includes(message.digestAlgorithm)) throw new ScepRefusal('badAlg', `Digest ${message.digestAlgorithm} is not allowed on this profile`);
    const inner = openEnvelope(message, { raPrivateKey: ra.privateKey, raCertificateDer: ra.certificateDer, allowedCiphers: allowedCiphers(settings) });
    switch (message.messageType) {
      case 'PKCSReq':
      case 'RenewalReq':
        return this.enrollment(profile, settings, message, Buffer.from(inner));
      case 'CertPoll':
        return this.poll(profile, message);
      case 'GetCert':
        return this.getCert(Buffer.from(inner));
      case 'GetCRL':
        return this.getCrl(profile, Buffer.from(inner), ra.chain);
      default:
        throw new ScepRefusal('badRequest', `Message type ${message.messageType} is not a request`);
    }
  }

  private async enrollment(profile: ProtocolProfile, settings: ScepSettings, message: PkiMessage, csrDer: Buffer): Promise<Answer> {
    const keyHash = createHash('sha256').update(new X509Certificate(Buffer.from(message.signerCertificateDer)).publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
    const csrHash = createHash('sha256').update(csrDer).digest('hex');
    const known = await this.transaction(profile.name, message.transactionId);
    if (known) {
      if (known.key_hash !== keyHash) throw new ScepRefusal('badRequest', 'This transactionID belongs to another key');
      // The same request again (a resend while pending): its state. A new CSR or another message type under the
      // same ID is a new enrollment (scepclient renews with its first CSR, as a RenewalReq).
      if (known.csr_hash === csrHash && known.message_type === message.messageType) return this.stateOf(known.request_id);
    }
    const csrPem = pem('CERTIFICATE REQUEST', csrDer);
    let outcome: EnrollmentOutcome | EnrollmentRefusal;
    if (message.messageType === 'RenewalReq') {
      outcome = await this.renewal(profile, settings, message, csrDer, csrPem);
    } else if (this.deps.hooks?.pkcsReq) {
      const input: PkcsReqInput = { profile, settings, message, csrDer, csrPem, challenge: challengePasswordOf(new Uint8Array(csrDer)) };
      try {
        outcome = await this.deps.hooks.pkcsReq(input);
      } catch (err) {
        if (err instanceof ScepRefusal || err instanceof ScepError) await this.tell(input, { status: 'FAILURE', reason: err.message });
        throw err;
      }
      if ('refused' in outcome) await this.tell(input, { status: 'FAILURE', reason: `${outcome.code}: ${outcome.message}` });
      else {
        const answer = this.answerOf(outcome);
        await this.tell(input, answer.status === 'SUCCESS' && 'certificatesDer' in answer ? { status: 'SUCCESS', certificateDer: answer.certificatesDer[0]! } : answer.status === 'FAILURE' ? { status: 'FAILURE', reason: answer.reason } : { status: 'PENDING' });
      }
    } else {
      const challenge = challengePasswordOf(new Uint8Array(csrDer));
      if (!challenge) throw new ScepRefusal('badRequest', 'The request carries no challenge password');
      if (settings.challenge === 'static') {
        if (!sameSecret(challenge, settings.staticChallenge!)) throw new ScepRefusal('badRequest', 'The challenge password is not valid');
        outcome = await this.deps.enrollment.enroll({ protocol: this.deps.protocol, profile: profile.name, csrPem, requester: `${this.deps.protocol}:static-challenge`, tenant: TENANT });
      } else {
        outcome = await this.deps.enrollment.consumeChallenge(challenge, csrPem, TENANT, { protocol: this.deps.protocol, profile: profile.name });
        if ('refused' in outcome && CHALLENGE_REFUSALS.has(outcome.code)) throw new ScepRefusal('badRequest', 'The challenge password is not valid, expired or already used');
      }
    }
    if ('refused' in outcome) throw new ScepRefusal(outcome.code === 'WEBRA-ENROLL-006' ? 'badMessageCheck' : 'badRequest', `${outcome.code}: ${outcome.message}`);
    await this.deps.db(this.deps.transactionsTable)
      .insert({ tenant: TENANT, profile: profile.name, transaction_id: message.transactionId, key_hash: keyHash, csr_hash: csrHash, message_type: message.messageType, request_id: outcome.requestId, created_at: this.deps.now() })
      .onConflict(['tenant', 'profile', 'transaction_id'])
      .merge(['csr_hash', 'message_type', 'request_id', 'created_at']);
    return this.answerOf(outcome);
  }

  /** RenewalReq: signed by the certificate being renewed (ours, in force, not revoked, of this profile). */
  private async renewal(profile: ProtocolProfile, settings: ScepSettings, message: PkiMessage, csrDer: Buffer, csrPem: string): Promise<EnrollmentOutcome | EnrollmentRefusal> {
    const signerPem = pem('CERTIFICATE', Buffer.from(message.signerCertificateDer));
    const current = await this.deps.enrollment.certificate(signerPem, TENANT);
    if (!current || current.revoked || current.profile !== profile.name) throw new ScepRefusal('badCertId', 'RenewalReq must be signed by a certificate of this profile that is in force');
    const x509 = new X509Certificate(signerPem);
    const now = this.deps.now();
    if (Date.parse(x509.validTo) <= now) throw new ScepRefusal('badTime', 'The certificate being renewed has expired');
    if (!settings.allowSubjectChange && !sameSubject(x509, csrDer)) throw new ScepRefusal('badRequest', 'The renewal must keep the certificate\'s subject');
    return this.deps.enrollment.renew({ protocol: this.deps.protocol, certificatePem: signerPem, csrPem, requester: `${this.deps.protocol}:certificate:${current.id}`, tenant: TENANT });
  }

  /** The flavour's `answered` hook; its failure never changes the client's answer. */
  private async tell(input: PkcsReqInput, answer: Parameters<NonNullable<ScepHooks['answered']>>[1]): Promise<void> {
    try {
      await this.deps.hooks?.answered?.(input, answer);
    } catch (err) {
      this.deps.onHookError?.(err);
    }
  }

  /** A one-time challenge of this protocol on the profile, for `requester` (the admin page, an MDM webhook). */
  async issueChallenge(profile: string, requester: string) {
    return this.deps.enrollment.newChallenge({ protocol: this.deps.protocol, profile, requester, tenant: TENANT });
  }

  /** CertPoll (GetCertInitial): the transaction's request, when the same key asks. */
  private async poll(profile: ProtocolProfile, message: PkiMessage): Promise<Answer> {
    const known = await this.transaction(profile.name, message.transactionId);
    if (!known) throw new ScepRefusal('badCertId', 'No enrollment with this transactionID');
    const keyHash = createHash('sha256').update(new X509Certificate(Buffer.from(message.signerCertificateDer)).publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
    if (known.key_hash !== keyHash) throw new ScepRefusal('badRequest', 'This transactionID belongs to another key');
    return this.stateOf(known.request_id);
  }

  /** GetCert: a certificate of the inventory by issuer and serial number. */
  private async getCert(inner: Buffer): Promise<Answer> {
    const { issuerDer, serialHex } = readIssuerAndSerial(new Uint8Array(inner));
    for (const found of await this.deps.enrollment.certificateBySerial(serialHex, TENANT)) {
      const x509 = new X509Certificate(found.certificatePem);
      if (Buffer.from(issuerDerOf(x509)).equals(Buffer.from(issuerDer))) return { status: 'SUCCESS', certificatesDer: [new Uint8Array(x509.raw)] };
    }
    throw new ScepRefusal('badCertId', 'No certificate with this issuer and serial number');
  }

  /** GetCRL: the CRL of the profile's CA, when the IssuerAndSerialNumber names a certificate it issued. */
  private async getCrl(profile: ProtocolProfile, inner: Buffer, chain: string[]): Promise<Answer> {
    const { issuerDer } = readIssuerAndSerial(new Uint8Array(inner));
    const issuing = chain[0] ? new X509Certificate(chain[0]) : null;
    const subjectDer = issuing ? new Uint8Array(pkijs.Certificate.fromBER(issuing.raw).subject.toSchema().toBER(false)) : null;
    if (!subjectDer || !Buffer.from(subjectDer).equals(Buffer.from(issuerDer))) throw new ScepRefusal('badCertId', 'The profile\'s CA did not issue this certificate');
    const crl = await this.deps.enrollment.crl(profile.name, TENANT);
    if (!crl) throw new ScepRefusal('badRequest', 'The profile\'s CA publishes no CRL');
    return { status: 'SUCCESS', crlDer: crl };
  }

  private async stateOf(requestId: string): Promise<Answer> {
    const outcome = await this.deps.enrollment.request(requestId, TENANT);
    if (!outcome) throw new ScepRefusal('badCertId', 'The transaction\'s request no longer exists');
    return this.answerOf(outcome);
  }

  private answerOf(outcome: EnrollmentOutcome): Answer {
    if (outcome.status === 'completed' && outcome.certificatePem) return { status: 'SUCCESS', certificatesDer: pemCertificatesToDer([outcome.certificatePem]) };
    if (outcome.status === 'pending' || outcome.status === 'approved') return { status: 'PENDING' };
    return { status: 'FAILURE', failInfo: 'badRequest', reason: `The request was ${outcome.status}${outcome.error ? `: ${outcome.error}` : ''}` };
  }

  private async transaction(profile: string, transactionId: string): Promise<{ key_hash: string; csr_hash: string; message_type: string; request_id: string } | undefined> {
    return (await this.deps.db(this.deps.transactionsTable).where({ tenant: TENANT, profile, transaction_id: transactionId }).first()) as { key_hash: string; csr_hash: string; message_type: string; request_id: string } | undefined;
  }

  private async ra(profile: string) {
    try {
      return await this.deps.ra.get(profile);
    } catch (err) {
      throw new ScepHttpError(503, 'SCEP-009', `The RA certificate is not available: ${(err as Error).message}`);
    }
  }

  /** Every refused SCEP call leaves an event (never a challenge or a password). */
  async failed(profile: string | null, operation: string, code: string, error: string, remoteAddress?: string, transactionId?: string): Promise<void> {
    await this.deps.events.append({
      code: `${this.deps.protocol.toUpperCase()}-REQUEST-FAILED`,
      module: this.deps.protocol,
      status: 'failure',
      objectType: 'profile',
      objectId: profile,
      payload: { profile, operation, code, error, transactionId: transactionId ?? null, remoteAddress: remoteAddress ?? null },
    });
  }
}

function pem(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
}

function basicOf(header: string | string[] | undefined): { user: string; password: string } | null {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

/** The page NDES shows, whose sentence Jamf and scripts scrape for the password. */
function ndesPage(challenge: string, expiresAt: number): string {
  const escaped = challenge.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<HTML><Head><Meta HTTP-Equiv="Content-Type" Content="text/html; charset=UTF-8"><Title>Network Device Enrollment Service</Title></Head>
<Body><P>You have successfully obtained a one-time enrollment challenge for this SCEP profile.</P>
<P>The enrollment challenge password is: <B> ${escaped} </B></P>
<P>This password can be used only once and will expire at ${new Date(expiresAt).toISOString()}.</P></Body></HTML>
`;
}

/** A name's attributes, case and spacing folded (RFC 5280 §7.1 in spirit). */
function nameElements(name: pkijs.RelativeDistinguishedNames): string[] {
  return name.typesAndValues.map((tv) => {
    const value = (tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value;
    const text = typeof value === 'string' ? value : Buffer.from(tv.value.toBER(false)).toString('hex');
    return `${tv.type}=${text.trim().replace(/\s+/g, ' ').toLowerCase()}`;
  });
}

/**
 * Whether the CSR keeps the certificate's subject: every attribute of the certificate's subject is in the CSR's.
 * (A profile may have dropped some of the first CSR's attributes — scepclient's C, O, OU — and clients renew with
 * their first CSR's subject; the renewal is issued with the certificate's subject either way.)
 */
function sameSubject(certificate: X509Certificate, csrDer: Buffer): boolean {
  const requested = new Set(nameElements(pkijs.CertificationRequest.fromBER(csrDer).subject));
  return nameElements(pkijs.Certificate.fromBER(certificate.raw).subject).every((e) => requested.has(e));
}

function issuerDerOf(certificate: X509Certificate): Uint8Array {
  return new Uint8Array(pkijs.Certificate.fromBER(certificate.raw).issuer.toSchema().toBER(false));
}
