import { HOLDER_POP_WORKFLOWS } from '../../profiles/rights.js';
import { popIdentifier } from '../../security/auth/authenticator.js';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { IssueRequest } from '@certwright/sdk';
import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { ProblemError } from '../../errors/index.js';
import { LIFECYCLE_EVENT_CODES as L } from '../../events/codes.js';
import { toPem } from '../../pki/input.js';
import { buildCsr } from '../../pki/csr/build.js';
import type { CsrInfo } from '../../pki/csr/parse.js';
import { encodePkcs12 } from '../../pki/pkcs12/encode.js';
import { parseCertificatePem } from '../../pki/x509/parse.js';
import { applyElementRules } from '../../profiles/changes.js';
import type { IssueResult } from '../../pki/connectors/types.js';
import type { CertificateProfile, CsrFacts, Rights, Workflow } from '../../profiles/types.js';
import { computeValues, datasourcesOf, hasComputationRules, type ComputedValues } from '../../profiles/computation.js';
import type { LookupTables } from '../../templatestring/evaluate.js';
import type { ResolvedPrincipal } from '../../security/principals/resolver.js';
import { DEFAULT_POLICY_NAME } from '../../security/password-policies/service.js';
import type { CoreServices } from '../../services.js';
import type { CertificateObject, KeyValue } from '../../inventory/types.js';
import { tableVisibility } from '../../events/routes/table-visibility.js';
import type { RequestStore } from '../store.js';
import { REQUEST_LANGUAGE } from '../language.js';
import type { StoredRequest } from '../types.js';
import type { RequestDeps } from '../routes/index.js';
import { envelopeOf, revocationReasonOf, storableTemplate, type Envelope } from './envelope.js';
import { generateKey, hashChallenge, newChallenge, type RequestSecrets } from './secrets.js';
import { Completions } from './completion.js';
import { RequestLedger } from './ledger.js';
import { CERTIFICATE_WORKFLOWS, CHALLENGE_PROTOCOLS, createPublicKeyDer, derOf, holderOf, invalid, keyValuesAfter, parseCsr, planOf, publicSpkiOfCertificate, sansElementsOf, single, subjectElementsOf, type Plan, type RequestAnswer } from './plan.js';

export type { RequestAnswer } from './plan.js';

/**
 * The request workflows (client-compat §2; interface-spec "States and transitions"): one submit for all
 * workflows, approve / deny / cancel as optimistic transitions, issuance and revocation through the PKI
 * gateway, whose completion handlers (completion.ts) finish requests inside the queue's transaction.
 */
/** A template element that holds a boolean: `{value: true}` or `true`; undefined when absent, null when not a boolean. */
function booleanElement(element: unknown): boolean | undefined | null {
  if (element === undefined || element === null) return undefined;
  const v = typeof element === 'object' && !Array.isArray(element) ? (element as { value?: unknown }).value : element;
  if (v === undefined || v === null) return undefined;
  return typeof v === 'boolean' ? v : null;
}

export class RequestWorkflows {
  readonly ledger: RequestLedger;
  readonly completions: Completions;

  constructor(
    private readonly services: CoreServices,
    private readonly deps: RequestDeps,
  ) {
    this.ledger = new RequestLedger(services);
    this.completions = new Completions(this.ledger);
  }

  get store(): RequestStore {
    return this.ledger.store;
  }

  get secrets(): RequestSecrets {
    return this.ledger.secrets;
  }

  private get knex(): Knex {
    return this.services.knex;
  }

  // ---------------------------------------------------------------- certificates and profiles

  private async certificateOf(tenant: string, env: Envelope, workflow: Workflow): Promise<CertificateObject> {
    const repo = this.services.inventory.repository;
    let found: CertificateObject | null = null;
    if (env.certificateId) found = await repo.get(tenant, env.certificateId);
    else if (env.certificatePem) {
      let thumbprint: string;
      try {
        thumbprint = parseCertificatePem(env.certificatePem).thumbprint;
      } catch {
        throw invalid(workflow, 'Could not parse provided PEM');
      }
      found = await repo.getByThumbprint(tenant, thumbprint);
    } else throw invalid(workflow, `The ${workflow} workflow needs certificateId or certificatePem`);
    if (!found) throw new ProblemError('CRT-003', { detail: `No certificate ${env.certificateId ?? 'with this PEM'}` });
    return found;
  }

  private rights(profile: CertificateProfile, principal: ResolvedPrincipal, workflow: Workflow): Rights {
    return this.deps.profiles.rightsOf(profile, principal, workflow);
  }

  // ---------------------------------------------------------------- template

  async template(request: FastifyRequest, body: unknown): Promise<Record<string, unknown>> {
    const env = envelopeOf(body);
    const workflow = env.workflow ?? 'enroll';
    const tenant = request.tenant;
    let profileName = env.profile;
    let certificate: CertificateObject | undefined;
    if (CERTIFICATE_WORKFLOWS.includes(workflow) && (env.certificateId || env.certificatePem)) {
      certificate = await this.certificateOf(tenant, env, workflow);
      if (workflow !== 'migrate' || !profileName) profileName = certificate.profile ?? profileName;
    }
    if (!profileName) throw invalid(workflow, 'The request names no profile');
    checkHolder(request.principal!, workflow, certificate);
    const profile = await this.deps.profiles.require(tenant, profileName);
    const rights = this.rights(profile, request.principal!, workflow);
    if (!rights.direct && !rights.request) throw new ProblemError('REQ-006');
    const template = this.deps.profiles.templateOf(profile, workflow, env.template);
    const module = env.module ?? certificate?.module ?? profile.module;
    const out: Record<string, unknown> = { module, workflow, profile: profile.name, template };
    if (certificate) out.certificateId = certificate._id;
    return out;
  }

  // ---------------------------------------------------------------- submit

  /**
   * `request`: who submits (an HTTP request's tenant and principal, or a protocol's requester from the
   * enrollment facade). `via.protocol`: an enrollment protocol plugin that authenticated the requester and
   * serves this profile (`protocols.<name>.enabled`): its enroll is not refused as a non-WebRA enroll.
   */
  async submit(request: Pick<FastifyRequest, 'tenant' | 'principal'>, body: unknown, via?: { protocol: string }): Promise<RequestAnswer> {
    const env = envelopeOf(body);
    const tenant = request.tenant;
    const principal = request.principal!;
    const workflow = env.workflow;
    if (!workflow) throw invalid(undefined, 'The request names no workflow');
    let certificate: CertificateObject | undefined;
    let profileName = env.profile;
    if (CERTIFICATE_WORKFLOWS.includes(workflow)) {
      certificate = await this.certificateOf(tenant, env, workflow);
      if (workflow !== 'migrate') profileName = certificate.profile ?? profileName;
      if (!profileName) throw invalid(workflow, 'The certificate belongs to no profile');
    }
    if (!profileName) throw invalid(workflow, 'The request names no profile');
    checkHolder(principal, workflow, certificate);
    const profile = await this.deps.profiles.require(tenant, profileName);
    const rights = this.rights(profile, principal, workflow);
    if (!rights.direct && !rights.request) throw new ProblemError('REQ-006', { detail: `${workflow} on profile ${profile.name}` });
    if (workflow === 'migrate' && certificate?.profile) {
      // Moving a certificate out of a profile needs the right on that profile too.
      const source = await this.deps.profiles.get(tenant, certificate.profile);
      if (source && !this.rights(source, principal, 'migrate').direct && !this.rights(source, principal, 'migrate').request) throw new ProblemError('REQ-006', { detail: `migrate from profile ${source.name}` });
    }
    const module = env.module ?? certificate?.module ?? profile.module ?? 'webra';
    // A WebRA enroll on an SCEP/EST/ACME profile would issue a certificate with a server-generated key where the
    // protocol's client expects a challenge (v1 Go NewScepChallengeRequest): refused until its protocol plugin
    // answers such requests itself.
    const enrollModule = [module, profile.module ?? 'webra'].find((m) => m !== 'webra');
    const servedByProtocol = via !== undefined && enrollModule === via.protocol && profile.protocols?.[via.protocol]?.enabled === true;
    // An EST, SCEP or MDM enroll submitted here (v1 Go NewScepChallengeRequest) asks for the one-time challenge
    // the device then presents to that protocol, which must be enabled on the profile.
    const protocolChallenge = via === undefined && workflow === 'enroll' && CHALLENGE_PROTOCOLS.includes(module) && profile.protocols?.[module]?.enabled === true;
    if (workflow === 'enroll' && enrollModule && !servedByProtocol && !protocolChallenge) throw new ProblemError('REQ-012', { detail: `profile ${profile.name} is a ${enrollModule} profile` });
    if (['enroll', 'renew'].includes(workflow) && !(await this.deps.gateway.exists(tenant, profile.pkiConnector))) {
      throw new ProblemError('REQ-011', { detail: `PKI connector ${profile.pkiConnector}` });
    }

    const prepared = await this.prepare(tenant, profile, workflow, env, certificate, protocolChallenge, principal);
    const direct = rights.direct;
    const challengeMode = protocolChallenge || (workflow === 'enroll' && profile.authorizationMode === 'challenge' && module === 'webra');
    prepared.plan.challengeMode = challengeMode;
    if (env.dryRun) {
      // Checked as a submission would be (rights, profile, template, CSR), nothing stored, nothing issued.
      const at = this.services.clock();
      return {
        _id: newId(at),
        module,
        workflow,
        status: direct ? 'approved' : 'pending',
        profile: profile.name,
        template: storableTemplate(env.template),
        holderId: prepared.holderId ?? null,
        registrationDate: at,
        lastModificationDate: at,
        removeAt: null,
        labels: prepared.labels ?? [],
        metadata: prepared.metadata ?? [],
        retryCount: 0,
        dryRun: true,
        requester: principal.identifier,
      };
    }

    const write = async (trx: Knex.Transaction, newRequestId?: string): Promise<StoredRequest> => {
      const inserted = await this.store.insert(
        {
          tenant,
          module,
          workflow,
          status: direct ? 'approved' : 'pending',
          profile: profile.name,
          template: storableTemplate(env.template),
          holderId: prepared.holderId ?? null,
          labels: prepared.labels ?? [],
          metadata: prepared.metadata ?? [],
          requester: principal.identifier,
          requesterComment: env.requesterComment ?? null,
          contact: env.contact ?? prepared.plan.contactEmail ?? null,
          team: prepared.plan.team ?? null,
          certificateId: certificate?._id ?? null,
          requestedX509Data: prepared.plan,
          ...(direct ? { approver: principal.identifier } : {}),
        },
        { trx, ...(newRequestId ? { id: newRequestId } : {}) },
      );
      const id = inserted.request._id;
      if (prepared.key) await this.secrets.put(trx, tenant, id, 'key', prepared.key);
      if (prepared.password) await this.secrets.put(trx, tenant, id, 'password', prepared.password);
      if (prepared.importKey) await this.secrets.put(trx, tenant, id, 'import-key', prepared.importKey);
      await this.ledger.eventsIn(trx, [
        { tenant, code: 'REQUEST-SUBMITTED', principal: principal.identifier, objectType: 'request', objectId: id, payload: { ...this.ledger.payloadOf(inserted.request), status: inserted.request.status } },
        ...(direct ? [] : [{ tenant, code: L.requestPending, principal: principal.identifier, objectType: 'request', objectId: id, payload: this.ledger.payloadOf(inserted.request) }]),
      ]);
      return inserted;
    };
    if (direct && (workflow === 'enroll' || workflow === 'renew') && !challengeMode) {
      // A direct issuance: the request (and its event) commit in one transaction with the PKI queue item,
      // before the connector is called (PkiGateway.issue `with`).
      const id = newId(this.services.clock());
      // The plan as the stored request will read it (requested_x509_data is JSON).
      const plan = JSON.parse(JSON.stringify(prepared.plan)) as Plan;
      let inserted: StoredRequest | undefined;
      const { stored, certificate } = await this.issueThrough(tenant, id, plan, profile, undefined, () => inserted, async (trx) => {
        inserted = await write(trx, id);
      });
      return this.answer(tenant, stored, principal, certificate);
    }
    const stored = await this.knex.transaction((trx) => write(trx));
    if (!direct) return this.answer(tenant, stored, principal);
    const done = await this.execute(tenant, stored, profile, principal);
    return this.answer(tenant, done, principal);
  }

  /**
   * Where computation rules read datasource records (Lookup): set once datasources are registered (the kernel);
   * without it, a rule that looks a record up fails as the playground's would.
   */
  lookupSource: ((tenant: string, names: readonly string[]) => Promise<LookupTables>) | undefined;

  /** What the profile's computation rules compute for this request (none without rules). */
  private async computed(
    tenant: string,
    profile: CertificateProfile,
    workflow: Workflow,
    template: Record<string, unknown>,
    csr: CsrFacts | undefined,
    requester: { identifier: string; name?: string | null; email?: string | null } | undefined,
  ): Promise<ComputedValues | undefined> {
    if (!hasComputationRules(profile)) return undefined;
    const names = datasourcesOf(profile);
    const lookups = names.length > 0 && this.lookupSource ? await this.lookupSource(tenant, names) : undefined;
    return computeValues(profile, { template, requester: requester ?? { identifier: 'anonymous' }, profile: profile.name, workflow, ...(csr ? { csr } : {}) }, { now: this.services.clock, ...(lookups ? { lookups } : {}) });
  }

  /** Checks a submission against its profile and computes what its execution needs. */
  private async prepare(
    tenant: string,
    profile: CertificateProfile,
    workflow: Workflow,
    env: Envelope,
    certificate: CertificateObject | undefined,
    protocolChallenge = false,
    principal?: ResolvedPrincipal,
  ): Promise<{ plan: Plan; labels?: KeyValue[]; metadata?: KeyValue[]; holderId?: string; key?: string; password?: string; importKey?: string }> {
    const plan: Plan = { pkiConnector: profile.pkiConnector };
    switch (workflow) {
      case 'enroll':
      case 'renew': {
        const template = { ...env.template };
        if (workflow === 'renew' && certificate) {
          // The renewal keeps the certificate's subject and SANs unless the template changes them.
          if (!('subject' in template)) template.subject = subjectElementsOf(certificate);
          if (!('sans' in template)) template.sans = sansElementsOf(certificate);
          if (!('labels' in template)) template.labels = certificate.labels.map((l) => ({ label: l.key, value: l.value }));
          if (!('owner' in template) && certificate.owner) template.owner = { value: certificate.owner };
          if (!('team' in template) && certificate.team) template.team = { value: certificate.team };
          if (!('contactEmail' in template) && certificate.contactEmail) template.contactEmail = { value: certificate.contactEmail };
        }
        const challenge = protocolChallenge || (workflow === 'enroll' && profile.authorizationMode === 'challenge');
        let csr: CsrInfo | undefined;
        if (typeof template.csr === 'string') csr = await parseCsr(template.csr, workflow);
        if (challenge && !csr) {
          // The CSR comes with the challenge: only the template is checked now, when it says something.
          return { plan: { ...plan, mode: 'decentralized' }, holderId: undefined };
        }
        const facts = csr ? { subject: csr.dn, sans: csr.sans, keyType: csr.keyType, dnElements: csr.dnElements } : undefined;
        const computed = await this.computed(tenant, profile, workflow, template, facts, principal);
        const resolved = this.deps.profiles.resolve(profile, workflow, template, facts, computed);
        await this.services.inventory.repository.labels.check(tenant, resolved.labels);
        Object.assign(plan, planOf(resolved));
        plan.escrow = profile.keyPolicy.escrow;
        const out: Awaited<ReturnType<RequestWorkflows['prepare']>> = { plan, labels: resolved.labels, metadata: resolved.metadata, holderId: holderOf(resolved.subject) };
        if (resolved.mode === 'decentralized') {
          if (!csr) throw invalid(workflow, 'A decentralized enrollment needs a CSR (template.csr)');
          plan.csr = csr.pem;
        } else {
          const key = await generateKey(resolved.keyType);
          plan.csr = toPem(buildCsr(key, { subject: resolved.subject, sans: resolved.sans }), 'CERTIFICATE REQUEST');
          out.key = key.export({ type: 'pkcs8', format: 'pem' }).toString();
          plan.showP12 = profile.keyPolicy.showP12OnEnroll;
          if (profile.keyPolicy.p12passwordMode === 'manual') {
            if (!env.password) throw new ProblemError('WEBRA-ENROLL-009');
            out.password = env.password;
            plan.showPassword = false;
          } else {
            // The profile generates the password: one the requester sent would be silently replaced.
            if (env.password) throw new ProblemError('WEBRA-ENROLL-010');
            out.password = await this.deps.security.passwordPolicies.generate(tenant, profile.keyPolicy.passwordPolicy ?? DEFAULT_POLICY_NAME);
            plan.showPassword = profile.keyPolicy.showP12PasswordOnEnroll;
          }
        }
        return out;
      }
      case 'revoke': {
        if (certificate!.revoked) throw new ProblemError('WEBRA-REVOKE-005');
        plan.reason = revocationReasonOf(env.revocationReason);
        return { plan, holderId: certificate!.holderId ?? undefined };
      }
      case 'update':
      case 'migrate': {
        const t = env.template;
        let changes: NonNullable<Plan['changes']> = {};
        const labels = keyValuesAfter(certificate!.labels, t.labels, 'label');
        if (labels) changes.labels = labels;
        const metadata = keyValuesAfter(certificate!.metadata, t.metadata, 'metadata');
        if (metadata) changes.metadata = metadata;
        for (const name of ['owner', 'team', 'contactEmail'] as const) {
          const v = single(t, name);
          if (v !== undefined) changes[name] = v;
        }
        // `autoRenew: {value}` (client-compat §2.3, API 2.10+; the MCP server's set_certificate_auto_renew), or a bare boolean.
        const autoRenew = booleanElement(t.autoRenew);
        if (autoRenew === null) throw invalid(workflow, 'template.autoRenew must be {"value": true|false}');
        if (autoRenew !== undefined) changes.autoRenew = autoRenew;
        // The profile's rules for these elements (the certificate's profile; for migrate, the one it enters).
        const c = certificate!;
        changes = applyElementRules(profile, { labels: c.labels, owner: c.owner ?? null, team: c.team ?? null, contactEmail: c.contactEmail ?? null }, changes, workflow === 'migrate');
        if (changes.labels) await this.services.inventory.repository.labels.check(tenant, changes.labels);
        plan.changes = changes;
        if (workflow === 'migrate') {
          if (!env.profile) throw invalid(workflow, 'The migrate workflow needs the target profile');
          plan.targetProfile = profile.name;
        }
        return { plan, holderId: certificate!.holderId ?? undefined };
      }
      case 'recover': {
        if (!(await this.secrets.escrowed(tenant, certificate!._id))) throw new ProblemError('WEBRA-RECOVER-006');
        const out: Awaited<ReturnType<RequestWorkflows['prepare']>> = { plan, holderId: certificate!.holderId ?? undefined };
        if (env.password) {
          out.password = env.password;
          plan.showPassword = false;
        } else {
          out.password = await this.deps.security.passwordPolicies.generate(tenant, profile.keyPolicy.passwordPolicy ?? DEFAULT_POLICY_NAME);
          plan.showPassword = true;
        }
        plan.showP12 = true;
        return out;
      }
      case 'import': {
        if (!env.certificatePem) throw invalid(workflow, 'The import workflow needs certificatePem');
        let info;
        try {
          info = parseCertificatePem(env.certificatePem);
        } catch {
          throw invalid(workflow, 'Could not parse provided PEM');
        }
        if (await this.services.inventory.repository.idOfThumbprint(tenant, info.thumbprint)) throw new ProblemError('CRT-004');
        plan.certificatePem = info.pem;
        const t = env.template;
        const requested: NonNullable<Plan['changes']> = { labels: keyValuesAfter([], t.labels, 'label') ?? [], metadata: keyValuesAfter([], t.metadata, 'metadata') ?? [] };
        for (const name of ['owner', 'team', 'contactEmail'] as const) {
          const v = single(t, name);
          if (v) requested[name] = v;
        }
        // The certificate enters the profile: its rules for labels, owner, team and contact apply.
        plan.changes = applyElementRules(profile, { labels: [], owner: null, team: null, contactEmail: null }, requested, true);
        const labels = plan.changes.labels ?? [];
        await this.services.inventory.repository.labels.check(tenant, labels);
        const out: Awaited<ReturnType<RequestWorkflows['prepare']>> = { plan, labels, holderId: holderOf(info.dn) };
        const privateKey = typeof t.privateKey === 'string' ? t.privateKey : undefined;
        if (privateKey) {
          let key: KeyObject;
          try {
            key = createPrivateKey(privateKey);
          } catch {
            throw new ProblemError('WEBRA-IMPORT-006', { message: 'Could not parse the private key' });
          }
          const spki = key.asymmetricKeyType && createPublicKeyDer(key);
          if (!spki || !Buffer.from(spki).equals(Buffer.from(publicSpkiOfCertificate(info.pem)))) throw new ProblemError('WEBRA-IMPORT-006');
          out.importKey = key.export({ type: 'pkcs8', format: 'pem' }).toString();
          plan.escrow = profile.keyPolicy.escrow;
        }
        return out;
      }
    }
  }

  // ---------------------------------------------------------------- execution

  /** Runs an approved request's workflow. Issuance and revocation complete through the gateway's handlers. */
  private async execute(tenant: string, stored: StoredRequest, profile: CertificateProfile, principal: ResolvedPrincipal): Promise<StoredRequest> {
    const r = stored.request;
    const plan = (r.requestedX509Data ?? {}) as Plan;
    const id = r._id;
    switch (r.workflow) {
      case 'enroll':
      case 'renew': {
        if (plan.challengeMode) return this.issueChallenge(tenant, stored, profile, principal);
        return this.issue(tenant, stored, profile);
      }
      case 'revoke': {
        const certificate = await this.services.inventory.repository.get(tenant, r.certificateId!);
        if (!certificate) throw new ProblemError('CRT-003');
        if (certificate.revoked) {
          await this.fail(tenant, stored, 'Certificate is already revoked');
          throw new ProblemError('WEBRA-REVOKE-005');
        }
        const connector = certificate.metadata.find((m) => m.key === 'pki_connector')?.value ?? profile.pkiConnector;
        let result;
        try {
          result = await this.deps.gateway.revoke(tenant, connector, id, { certificatePem: certificate.certificate, serial: certificate.serial, reason: plan.reason?.rfc ?? 'unspecified' });
        } catch (err) {
          await this.fail(tenant, stored, (err as Error).message);
          throw err;
        }
        if (result.status === 'queued') return this.queued(tenant, id, result.retryAt);
        return (await this.store.get(tenant, id))!;
      }
      case 'update':
      case 'migrate': {
        return this.knex.transaction(async (trx) => {
          const changes = plan.changes ?? {};
          const patch: Record<string, unknown> = { ...changes };
          const before = await this.services.inventory.repository.get(tenant, r.certificateId!, trx);
          if (r.workflow === 'migrate') {
            patch.profile = plan.targetProfile ?? r.profile;
            patch.module = r.module;
          }
          await this.services.inventory.repository.update(tenant, r.certificateId!, patch, { trx });
          const done = await this.complete(trx, tenant, stored, r.certificateId!);
          if (r.workflow === 'migrate') {
            await this.ledger.event(trx, { tenant, code: 'CERTIFICATE-MIGRATED', principal: principal.identifier, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId: id, from: before?.profile ?? null, to: patch.profile } });
          } else {
            await this.ledger.event(trx, { tenant, code: 'CERTIFICATE-UPDATED', principal: principal.identifier, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId: id, changed: Object.keys(changes) } });
          }
          return done;
        });
      }
      case 'recover': {
        const keyPem = await this.secrets.escrowed(tenant, r.certificateId!);
        if (!keyPem) throw new ProblemError('WEBRA-RECOVER-006');
        const certificate = (await this.services.inventory.repository.get(tenant, r.certificateId!))!;
        const connector = certificate.metadata.find((m) => m.key === 'pki_connector')?.value ?? profile.pkiConnector;
        const chain = await this.deps.gateway.caChain(tenant, connector).catch(() => [] as string[]);
        return this.knex.transaction(async (trx) => {
          const password = (await this.secrets.peek(trx, tenant, id, 'password'))!;
          const p12 = encodePkcs12({ privateKeyPkcs8Der: derOf(keyPem), certificatesDer: [derOf(certificate.certificate), ...chain.map(derOf)], password, friendlyName: certificate.dn });
          await this.secrets.put(trx, tenant, id, 'pkcs12', Buffer.from(p12).toString('base64'));
          if (!plan.showPassword) await this.secrets.drop(trx, tenant, id, ['password']);
          const done = await this.complete(trx, tenant, stored, certificate._id);
          await this.ledger.event(trx, { tenant, code: 'CERTIFICATE-RECOVERED', principal: principal.identifier, objectType: 'certificate', objectId: certificate._id, payload: { requestId: id, requester: r.requester ?? null } });
          return done;
        });
      }
      case 'import': {
        return this.knex.transaction(async (trx) => {
          const changes = plan.changes ?? {};
          const keyPem = await this.secrets.peek(trx, tenant, id, 'import-key');
          const escrowed = Boolean(keyPem && plan.escrow);
          const certificate = await this.services.inventory.repository.insert(
            tenant,
            {
              certificate: plan.certificatePem!,
              module: r.module,
              profile: r.profile,
              owner: changes.owner ?? null,
              team: changes.team ?? null,
              contactEmail: changes.contactEmail ?? null,
              labels: changes.labels ?? [],
              metadata: changes.metadata ?? [],
              holderId: r.holderId,
              escrowed,
            },
            { trx },
          );
          if (keyPem && escrowed) await this.secrets.escrow(trx, tenant, certificate._id, id, keyPem);
          await this.secrets.drop(trx, tenant, id, ['import-key']);
          const done = await this.complete(trx, tenant, stored, certificate._id);
          await this.ledger.event(trx, { tenant, code: 'CERTIFICATE-ENROLL-IMPORTED', principal: principal.identifier, objectType: 'certificate', objectId: certificate._id, payload: { requestId: id, profile: r.profile, escrowed } });
          return done;
        });
      }
    }
  }

  /** Issuance through the gateway; the `issued` handler completes the request before this returns. */
  private async issue(tenant: string, stored: StoredRequest, profile: CertificateProfile, csrPem?: string): Promise<StoredRequest> {
    const plan = (stored.request.requestedX509Data ?? {}) as Plan;
    return (await this.issueThrough(tenant, stored.request._id, plan, profile, csrPem, () => stored)).stored;
  }

  /**
   * Issues request `id` through the gateway; `current` is the request as stored (for `fail`), `write` the
   * writes of a request not stored yet (committed with the queue item). Answers the request after the
   * gateway, and the certificate when the `issued` handler of this call recorded it (no read back).
   */
  private async issueThrough(
    tenant: string,
    id: string,
    plan: Plan,
    profile: CertificateProfile,
    csrPem: string | undefined,
    current: () => StoredRequest | undefined,
    write?: (trx: Knex.Transaction) => Promise<void>,
  ): Promise<{ stored: StoredRequest; certificate?: CertificateObject }> {
    let result: IssueResult;
    this.ledger.wait(tenant, id, { known: current });
    try {
      const request: IssueRequest = {
        requestId: id,
        csrPem: csrPem ?? plan.csr!,
        profile: profile.name,
        ...(plan.subject ? { subject: plan.subject } : {}),
        ...(plan.sans ? { sans: plan.sans.map((s) => ({ type: s.sanType, value: s.value })) } : {}),
        ...(plan.validityDays ? { validityDays: plan.validityDays } : {}),
        ...(plan.keyUsage ? { keyUsage: plan.keyUsage } : {}),
        ...(plan.extendedKeyUsage ? { extendedKeyUsage: plan.extendedKeyUsage } : {}),
      };
      result = await this.deps.gateway.issue(tenant, plan.pkiConnector ?? profile.pkiConnector, request, write ? { with: write } : {});
    } catch (err) {
      this.ledger.endWait(tenant, id);
      const stored = current();
      if (stored) await this.fail(tenant, stored, (err as Error).message);
      throw err;
    }
    const written = this.ledger.endWait(tenant, id);
    if (result.status === 'queued') return { stored: await this.queued(tenant, id, result.retryAt) };
    // What this call's completion committed, else (completed elsewhere, or rejected) a read.
    if (written) return { stored: written.stored, certificate: written.certificate };
    return { stored: (await this.store.get(tenant, id))! };
  }

  /** A queued issuance: the request stays approved, with when the queue tries again. */
  private async queued(tenant: string, id: string, retryAt: number): Promise<StoredRequest> {
    const current = (await this.store.get(tenant, id))!;
    if (current.request.status !== 'approved') return current;
    const state = await this.deps.gateway.queueState(tenant, id);
    const result = await this.store.update(tenant, id, current.version, { retryAt, retryCount: state?.attempts ?? current.request.retryCount + 1 }, { base: current });
    return result.outcome === 'updated' ? result.stored : ((await this.store.get(tenant, id)) ?? current);
  }

  /** A workflow that could not even start (connector missing): denied with the reason. */
  private async fail(tenant: string, stored: StoredRequest, error: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      const current = await this.store.get(tenant, stored.request._id, { trx });
      if (!current || current.request.status === 'completed' || current.request.status === 'denied') return;
      await this.store.update(tenant, current.request._id, current.version, { status: 'denied', error }, { trx, base: current });
      await this.ledger.event(trx, { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: current.request._id, payload: { ...this.ledger.payloadOf(current.request), error } });
    });
  }

  private async complete(trx: Knex.Transaction, tenant: string, stored: StoredRequest, certificateId: string): Promise<StoredRequest> {
    const done = await this.ledger.transition(trx, stored, tenant, { status: 'completed', certificateId, retryAt: null, error: null });
    await this.ledger.event(trx, { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: stored.request._id, payload: { ...this.ledger.payloadOf(stored.request), certificateId } });
    return done;
  }

  // ---------------------------------------------------------------- challenges

  private async issueChallenge(tenant: string, stored: StoredRequest, profile: CertificateProfile, principal: ResolvedPrincipal): Promise<StoredRequest> {
    const { secret, hash } = newChallenge();
    const now = this.services.clock();
    const expiresAt = now + profile.challenge.validityMinutes * 60_000;
    return this.knex.transaction(async (trx) => {
      const current = (await this.store.get(tenant, stored.request._id, { trx }))!;
      await trx('request_challenges').insert({ hash, tenant, request_id: current.request._id, expires_at: expiresAt, consumed_at: null, created_at: now });
      await this.secrets.put(trx, tenant, current.request._id, 'challenge', secret);
      const updated = await this.ledger.transition(trx, current, tenant, { expirationDate: expiresAt });
      await this.ledger.event(trx, { tenant, code: 'CHALLENGE-ISSUED', principal: principal.identifier, objectType: 'request', objectId: current.request._id, payload: { ...this.ledger.payloadOf(current.request), expiresAt } });
      return updated;
    });
  }

  /** POST /api/v1/challenge/submit: the challenge authorizes one enrollment with this CSR. */
  async consumeChallenge(tenant: string, input: { challenge?: unknown; csr?: unknown; template?: unknown }, scope?: { protocol: string; profile: string }): Promise<RequestAnswer> {
    // Horizon's MCP server sends the CSR inside `template` (src/tools/lifecycle/challenge.ts), as a submit does.
    const template = typeof input.template === 'object' && input.template !== null ? (input.template as { csr?: unknown }) : {};
    const body = { challenge: input.challenge, csr: input.csr ?? template.csr };
    if (typeof body.challenge !== 'string' || body.challenge === '' || typeof body.csr !== 'string') throw new ProblemError('CHAL-002', { message: 'The body needs challenge and csr (or template.csr)' });
    const hash = hashChallenge(body.challenge);
    const row = (await this.knex('request_challenges').where({ hash, tenant }).first()) as { request_id: string; expires_at: number | string; consumed_at: number | string | null } | undefined;
    if (!row) throw new ProblemError('CHAL-003');
    if (row.consumed_at !== null) throw new ProblemError('CHAL-007');
    if (Number(row.expires_at) <= this.services.clock()) throw new ProblemError('CHAL-006');
    const stored = await this.store.get(tenant, row.request_id);
    if (!stored || stored.request.status !== 'approved') throw new ProblemError('CHAL-007');
    // A protocol spends only the challenges submitted for it on the profile it serves (an EST challenge is no SCEP password).
    // The challenge API (no scope) spends WebRA challenges only.
    if (scope ? stored.request.module !== scope.protocol || stored.request.profile !== scope.profile : stored.request.module !== 'webra') throw new ProblemError('CHAL-003');
    const profile = await this.deps.profiles.require(tenant, stored.request.profile!);
    const csr = await parseCsr(body.csr, 'enroll');
    // Checked before the challenge is spent: a bad CSR leaves it usable.
    const facts = { subject: csr.dn, sans: csr.sans, keyType: csr.keyType, dnElements: csr.dnElements };
    const submitted = { ...stored.request.template, csr: csr.pem };
    const computed = await this.computed(tenant, profile, 'enroll', submitted, facts, stored.request.requester ? { identifier: stored.request.requester } : undefined);
    const resolved = this.deps.profiles.resolve(profile, 'enroll', submitted, facts, computed);
    if (resolved.mode !== 'decentralized') throw new ProblemError('CHAL-002', { message: 'A challenge enrollment is decentralized: the CSR carries the key' });
    const plan: Plan = { ...((stored.request.requestedX509Data ?? {}) as Plan), ...planOf(resolved), csr: csr.pem, challengeMode: true };
    const ready = await this.knex.transaction(async (trx) => {
      const spent = await trx('request_challenges').where({ hash, tenant }).whereNull('consumed_at').update({ consumed_at: this.services.clock() });
      if (spent === 0) throw new ProblemError('CHAL-007');
      await this.secrets.drop(trx, tenant, stored.request._id, ['challenge']);
      const updated = await this.ledger.transition(trx, stored, tenant, { requestedX509Data: plan, labels: resolved.labels, metadata: resolved.metadata, holderId: holderOf(resolved.subject) });
      await this.ledger.event(trx, { tenant, code: 'CHALLENGE-CONSUMED', objectType: 'request', objectId: stored.request._id, payload: this.ledger.payloadOf(stored.request) });
      return updated;
    });
    const done = await this.issue(tenant, ready, profile, csr.pem);
    return this.answer(tenant, done, null);
  }

  // ---------------------------------------------------------------- decisions

  private async pendingFor(request: FastifyRequest, body: unknown): Promise<{ env: Envelope; stored: StoredRequest; profile: CertificateProfile | null; rights: Rights | null }> {
    const env = envelopeOf(body);
    if (!env.id) throw new ProblemError('REQ-002', { message: 'The body needs the request _id' });
    const stored = await this.store.get(request.tenant, env.id);
    if (!stored || !(await this.visible(request, stored))) throw new ProblemError('REQ-003', { detail: `No request ${env.id}` });
    const profile = stored.request.profile ? await this.deps.profiles.get(request.tenant, stored.request.profile) : null;
    const rights = profile ? this.rights(profile, request.principal!, stored.request.workflow) : null;
    return { env, stored, profile, rights };
  }

  async approve(request: FastifyRequest, body: unknown): Promise<RequestAnswer> {
    const { env, stored, profile, rights } = await this.pendingFor(request, body);
    const principal = request.principal!;
    const tenant = request.tenant;
    if (!profile || !profile.enabled) throw new ProblemError('PRF-003');
    this.checkDecider(stored, profile, rights, principal);
    if (stored.request.status !== 'pending') throw new ProblemError('REQ-009');
    const approved = await this.knex.transaction(async (trx) => {
      const next = await this.ledger.transition(trx, stored, tenant, { status: 'approved', approver: principal.identifier, approverComment: env.approverComment ?? null });
      await this.ledger.event(trx, { tenant, code: L.requestApproved, principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: { ...this.ledger.payloadOf(stored.request), approver: principal.identifier } });
      return next;
    });
    const done = await this.execute(tenant, approved, profile, principal);
    return this.answer(tenant, done, principal);
  }

  async deny(request: FastifyRequest, body: unknown): Promise<RequestAnswer> {
    const { env, stored, profile, rights } = await this.pendingFor(request, body);
    const principal = request.principal!;
    const tenant = request.tenant;
    if (profile) this.checkDecider(stored, profile, rights, principal);
    else if (!principal.permissions.allows(`lifecycle:${stored.request.module}:*:${stored.request.workflow}:approve`)) throw new ProblemError('REQ-007');
    if (stored.request.status !== 'pending') throw new ProblemError('REQ-009');
    const denied = await this.knex.transaction(async (trx) => {
      const next = await this.ledger.transition(trx, stored, tenant, { status: 'denied', approver: principal.identifier, approverComment: env.approverComment ?? null });
      await this.secrets.drop(trx, tenant, stored.request._id, ['key', 'password', 'import-key']);
      await this.ledger.event(trx, { tenant, code: L.requestDenied, principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: { ...this.ledger.payloadOf(stored.request), approver: principal.identifier } });
      return next;
    });
    return this.answer(tenant, denied, principal);
  }

  async cancel(request: FastifyRequest, body: unknown): Promise<RequestAnswer> {
    const { stored, rights } = await this.pendingFor(request, body);
    const principal = request.principal!;
    const tenant = request.tenant;
    const own = stored.request.requester === principal.identifier;
    if (!own && !rights?.approve) throw new ProblemError('REQ-010');
    if (stored.request.status !== 'pending') throw new ProblemError('REQ-009');
    const canceled = await this.knex.transaction(async (trx) => {
      const next = await this.ledger.transition(trx, stored, tenant, { status: 'canceled' });
      await this.secrets.drop(trx, tenant, stored.request._id, ['key', 'password', 'import-key']);
      await this.ledger.event(trx, { tenant, code: 'REQUEST-CANCELED', principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: this.ledger.payloadOf(stored.request) });
      return next;
    });
    return this.answer(tenant, canceled, principal);
  }

  private checkDecider(stored: StoredRequest, profile: CertificateProfile, rights: Rights | null, principal: ResolvedPrincipal): void {
    if (!rights?.approve) throw new ProblemError('REQ-007');
    if (stored.request.requester === principal.identifier && !profile.authorizations.selfApproval) throw new ProblemError('REQ-008');
  }

  // ---------------------------------------------------------------- reads

  /** Whether the caller may see a request: its requester, an approver of its profile, or a search:requests holder whose filters match. */
  async visible(request: FastifyRequest, stored: StoredRequest): Promise<boolean> {
    const principal = request.principal!;
    if (stored.request.requester === principal.identifier) return true;
    if (stored.request.profile) {
      const profile = await this.deps.profiles.get(request.tenant, stored.request.profile);
      if (profile && this.rights(profile, principal, stored.request.workflow).approve) return true;
    }
    const qb = this.knex('requests').where({ tenant: request.tenant, id: stored.request._id }).first('id');
    tableVisibility(qb, request, { language: REQUEST_LANGUAGE, permission: 'search:requests', knex: this.knex, now: this.services.clock(), logger: this.services.logger });
    return Boolean(await qb);
  }

  async get(request: FastifyRequest, id: string): Promise<RequestAnswer> {
    const stored = await this.store.get(request.tenant, id);
    if (!stored || !(await this.visible(request, stored))) throw new ProblemError('REQ-003', { detail: `No request ${id}` });
    const answer = await this.answer(request.tenant, stored, request.principal!);
    const principal = request.principal!;
    const profile = stored.request.profile ? await this.deps.profiles.get(request.tenant, stored.request.profile) : null;
    const rights = profile ? this.rights(profile, principal, stored.request.workflow) : { direct: false, request: false, approve: false };
    const pending = stored.request.status === 'pending';
    const own = stored.request.requester === principal.identifier;
    const decide = pending && rights.approve && (!own || Boolean(profile?.authorizations.selfApproval));
    answer.permissions = { approve: decide, deny: decide, cancel: pending && (own || rights.approve) };
    if (stored.request.holderId) {
      const counts = await this.services.inventory.repository.validCountsByHolder(request.tenant, stored.request.holderId, stored.request.profile);
      answer.globalHolderIdCount = counts.global;
      answer.profileHolderIdCount = counts.profile;
    }
    return answer;
  }

  /**
   * The request object as answered: the stored keys, the certificate when there is one, and the one-time
   * values (PKCS#12, its password, a challenge) when `reader` is the requester (each read once).
   */
  async answer(tenant: string, stored: StoredRequest, reader: ResolvedPrincipal | null, known?: CertificateObject): Promise<RequestAnswer> {
    const r = stored.request;
    const out: RequestAnswer = { ...r };
    if (r.certificateId && r.status === 'completed') {
      const certificate = known && known._id === r.certificateId ? known : await this.services.inventory.repository.get(tenant, r.certificateId);
      if (certificate) {
        out.certificate = certificate;
        out.certificatePem = certificate.certificate;
      }
    }
    if (r.status === 'approved' && r.retryCount === 0) {
      const state = await this.deps.gateway.queueState(tenant, r._id).catch(() => null);
      if (state && state.nextAttemptAt !== null) {
        out.retryAt = state.nextAttemptAt;
        out.retryCount = state.attempts;
      }
    }
    const forRequester = reader === null || reader.identifier === r.requester;
    if (forRequester) {
      const plan = (r.requestedX509Data ?? {}) as Plan;
      // A decentralized enrollment or renewal never has a PKCS#12 (no key of ours).
      const keyless = (r.workflow === 'enroll' || r.workflow === 'renew') && plan.mode === 'decentralized';
      if (r.status === 'completed' && !keyless) {
        const p12 = await this.secrets.take(tenant, r._id, 'pkcs12');
        if (p12 !== null) {
          if (plan.showP12 !== false) out.pkcs12 = { value: p12 };
          const password = await this.secrets.take(tenant, r._id, 'password');
          if (password !== null && plan.showPassword) out.password = { value: password };
        }
      } else if (r.status === 'approved') {
        const challenge = await this.secrets.take(tenant, r._id, 'challenge');
        if (challenge !== null) out.password = { value: challenge };
      }
    }
    // Internal plan fields stay internal.
    if (out.requestedX509Data && typeof out.requestedX509Data === 'object') {
      const { subject, sans, keyType, validityDays, keyUsage, extendedKeyUsage } = out.requestedX509Data as Plan;
      out.requestedX509Data = Object.fromEntries(Object.entries({ subject, sans, keyType, validityDays, keyUsage, extendedKeyUsage }).filter(([, v]) => v !== undefined));
    }
    return out;
  }
}

/**
 * A holder logged in by proof of possession acts on the certificate it proved alone, and only to renew,
 * revoke or update it (the profile must also grant `holder:pop`: rights.ts).
 */
function checkHolder(principal: ResolvedPrincipal, workflow: Workflow, certificate: CertificateObject | undefined): void {
  if (principal.identityProviderType !== 'pop') return;
  if (!HOLDER_POP_WORKFLOWS.includes(workflow) || !certificate || popIdentifier(certificate.thumbprint) !== principal.identifier) {
    throw new ProblemError('REQ-006', { detail: 'A proof of possession allows renewing, revoking or updating the proven certificate only' });
  }
}
