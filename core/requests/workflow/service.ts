import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { IssueRequest } from '@certwright/sdk';
import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { newId } from '../../db/ids.js';
import { ProblemError } from '../../errors/index.js';
import type { NewEventInput } from '../../events/store.js';
import { LIFECYCLE_EVENT_CODES as L } from '../../events/codes.js';
import { pemBlocks, toPem } from '../../pki/input.js';
import { buildCsr } from '../../pki/csr/build.js';
import { parseCsrPem, type CsrInfo } from '../../pki/csr/parse.js';
import { encodePkcs12 } from '../../pki/pkcs12/encode.js';
import { parseCertificatePem } from '../../pki/x509/parse.js';
import { applyElementRules } from '../../profiles/changes.js';
import type { FinalIssue, FinalRevoke, IssueResult } from '../../pki/connectors/types.js';
import type { CertificateProfile, ResolvedTemplate, Rights, Workflow } from '../../profiles/types.js';
import type { ResolvedPrincipal } from '../../security/principals/resolver.js';
import { DEFAULT_POLICY_NAME } from '../../security/password-policies/service.js';
import type { CoreServices } from '../../services.js';
import type { CertificateObject, KeyValue } from '../../inventory/types.js';
import { tableVisibility } from '../../events/routes/table-visibility.js';
import { RequestStore } from '../store.js';
import { REQUEST_LANGUAGE } from '../language.js';
import type { RequestObject, RequestPatch, StoredRequest } from '../types.js';
import type { RequestDeps } from '../routes/index.js';
import { envelopeOf, revocationReasonOf, storableTemplate, type Envelope } from './envelope.js';
import { generateKey, hashChallenge, newChallenge, RequestSecrets } from './secrets.js';

/** What the workflow needs later, kept in the request's requestedX509Data (nothing secret). */
interface Plan {
  subject?: string;
  sans?: { sanType: string; value: string }[];
  keyType?: string;
  mode?: 'centralized' | 'decentralized';
  validityDays?: number;
  keyUsage?: string[];
  extendedKeyUsage?: string[];
  csr?: string;
  owner?: string;
  team?: string;
  contactEmail?: string;
  /** PKI connector of the profile at submission. */
  pkiConnector?: string;
  escrow?: boolean;
  /** Hand the PKCS#12 password back (generated mode and showP12PasswordOnEnroll). */
  showPassword?: boolean;
  showP12?: boolean;
  /** Revoke: reason names. */
  reason?: { rfc: string; upper: string };
  /** Migrate: target profile. */
  targetProfile?: string;
  /** Update / migrate: the certificate changes. */
  changes?: { labels?: KeyValue[]; metadata?: KeyValue[]; owner?: string | null; team?: string | null; contactEmail?: string | null };
  /** Import: the certificate PEM. */
  certificatePem?: string;
  challengeMode?: boolean;
}

/** A request answer: the stored object plus what the routes add (client-compat §2.5). */
export type RequestAnswer = RequestObject & {
  certificate?: CertificateObject;
  certificatePem?: string;
  pkcs12?: { value: string };
  password?: { value: string };
  permissions?: Record<string, boolean>;
};

const WORKFLOW_CODE: Record<Workflow, 'WEBRA-ENROLL-002' | 'WEBRA-RENEW-002' | 'WEBRA-REVOKE-002' | 'WEBRA-UPDATE-002' | 'WEBRA-MIGRATE-002' | 'WEBRA-RECOVER-002' | 'WEBRA-IMPORT-002'> = {
  enroll: 'WEBRA-ENROLL-002',
  renew: 'WEBRA-RENEW-002',
  revoke: 'WEBRA-REVOKE-002',
  update: 'WEBRA-UPDATE-002',
  migrate: 'WEBRA-MIGRATE-002',
  recover: 'WEBRA-RECOVER-002',
  import: 'WEBRA-IMPORT-002',
};

const CERTIFICATE_WORKFLOWS: readonly Workflow[] = ['renew', 'revoke', 'update', 'migrate', 'recover'];

const invalid = (workflow: Workflow | undefined, message: string): ProblemError => new ProblemError(workflow ? WORKFLOW_CODE[workflow] : 'REQ-002', { message });

const derOf = (pem: string): Uint8Array => {
  const block = pemBlocks(pem)[0];
  if (!block) throw new Error('not a PEM');
  return block.der;
};

/**
 * Label or metadata changes of an update template (elements named by `label` / `metadata`, or `key`): `value:
 * null` (or empty) deletes, an element left out is kept. undefined when the template has no such list.
 */
function keyValuesAfter(current: KeyValue[], elements: unknown, nameKey: 'label' | 'metadata'): KeyValue[] | undefined {
  if (!Array.isArray(elements)) return undefined;
  const out = new Map(current.map((p) => [p.key, p.value]));
  for (const e of elements as Record<string, unknown>[]) {
    const named = e?.[nameKey] ?? e?.key;
    if (typeof named !== 'string' || !named) continue;
    if (e.value === null || e.value === undefined || e.value === '') out.delete(named);
    else out.set(named, String(e.value));
  }
  return [...out].map(([key, value]) => ({ key, value }));
}

/** `{value}` element of the template: undefined = absent (keep), null = delete. */
function single(template: Record<string, unknown>, name: string): string | null | undefined {
  if (!(name in template)) return undefined;
  const v = template[name];
  if (v === null) return null;
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'object' && v !== null && 'value' in v) {
    const inner = (v as { value: unknown }).value;
    return inner === null || inner === undefined || inner === '' ? null : String(inner);
  }
  return undefined;
}

/**
 * The request workflows (client-compat §2; interface-spec "States and transitions"): one submit for all
 * workflows, approve / deny / cancel as optimistic transitions, issuance and revocation through the PKI
 * gateway whose completion handlers (`issued`, `revoked`) finish requests inside the queue's transaction.
 */
export class RequestWorkflows {
  readonly store: RequestStore;
  readonly secrets: RequestSecrets;
  /**
   * Issuances this node's callers wait for (issueThrough): the `issued` handler leaves here, once its
   * transaction committed, the request and certificate it wrote, so the answer is not read back.
   */
  private readonly written = new Map<string, { known: () => StoredRequest | undefined; done?: { stored: StoredRequest; certificate: CertificateObject } }>();

  constructor(
    private readonly services: CoreServices,
    private readonly deps: RequestDeps,
  ) {
    this.store = new RequestStore(services.knex, services.clock);
    this.secrets = new RequestSecrets(services.knex, services.secrets, services.clock);
  }

  private get knex(): Knex {
    return this.services.knex;
  }

  private event(trx: Knex.Transaction, input: Omit<NewEventInput, 'module' | 'status'> & { status?: NewEventInput['status'] }): Promise<unknown> {
    return this.services.events.append({ module: 'webra', status: 'success', ...input }, { trx });
  }

  /**
   * Several events in order under one lock of the chain head (EventStore.appendAll), in a transaction that
   * has written the request already (every caller appends after its request write).
   */
  private eventsIn(trx: Knex.Transaction, inputs: (Omit<NewEventInput, 'module' | 'status'> & { status?: NewEventInput['status'] })[]): Promise<unknown> {
    return this.services.events.appendAll(
      inputs.map((input) => ({ module: 'webra', status: 'success' as const, ...input })),
      { trx, written: true },
    );
  }

  private requestPayload(r: RequestObject): Record<string, unknown> {
    return { requestId: r._id, workflow: r.workflow, profile: r.profile, requester: r.requester ?? null };
  }

  /** Applies a patch at the version read; a concurrent transition wins and this one is refused (REQ-009). */
  private async transition(trx: Knex.Transaction, stored: StoredRequest, tenant: string, patch: RequestPatch): Promise<StoredRequest> {
    const result = await this.store.update(tenant, stored.request._id, stored.version, patch, { trx, base: stored });
    if (result.outcome === 'updated') return result.stored;
    if (result.outcome === 'missing') throw new ProblemError('REQ-003');
    throw new ProblemError('REQ-009', { message: 'The request changed meanwhile (another decision was taken first)' });
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

  async submit(request: FastifyRequest, body: unknown): Promise<RequestAnswer> {
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
    const profile = await this.deps.profiles.require(tenant, profileName);
    const rights = this.rights(profile, principal, workflow);
    if (!rights.direct && !rights.request) throw new ProblemError('REQ-006', { detail: `${workflow} on profile ${profile.name}` });
    if (workflow === 'migrate' && certificate?.profile) {
      // Moving a certificate out of a profile needs the right on that profile too.
      const source = await this.deps.profiles.get(tenant, certificate.profile);
      if (source && !this.rights(source, principal, 'migrate').direct && !this.rights(source, principal, 'migrate').request) throw new ProblemError('REQ-006', { detail: `migrate from profile ${source.name}` });
    }
    const module = env.module ?? certificate?.module ?? profile.module ?? 'webra';
    if (['enroll', 'renew'].includes(workflow) && !(await this.deps.gateway.exists(tenant, profile.pkiConnector))) {
      throw new ProblemError('REQ-011', { detail: `PKI connector ${profile.pkiConnector}` });
    }

    const prepared = await this.prepare(tenant, profile, workflow, env, certificate);
    const direct = rights.direct;
    const challengeMode = workflow === 'enroll' && profile.authorizationMode === 'challenge' && module === 'webra';
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
      await this.eventsIn(trx, [
        { tenant, code: 'REQUEST-SUBMITTED', principal: principal.identifier, objectType: 'request', objectId: id, payload: { ...this.requestPayload(inserted.request), status: inserted.request.status } },
        ...(direct ? [] : [{ tenant, code: L.requestPending, principal: principal.identifier, objectType: 'request', objectId: id, payload: this.requestPayload(inserted.request) }]),
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

  /** Checks a submission against its profile and computes what its execution needs. */
  private async prepare(
    tenant: string,
    profile: CertificateProfile,
    workflow: Workflow,
    env: Envelope,
    certificate: CertificateObject | undefined,
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
        const challenge = workflow === 'enroll' && profile.authorizationMode === 'challenge';
        let csr: CsrInfo | undefined;
        if (typeof template.csr === 'string') csr = parseCsr(template.csr, workflow);
        if (challenge && !csr) {
          // The CSR comes with the challenge: only the template is checked now, when it says something.
          return { plan: { ...plan, mode: 'decentralized' }, holderId: undefined };
        }
        const resolved = this.deps.profiles.resolve(profile, workflow, template, csr ? { subject: csr.dn, sans: csr.sans, keyType: csr.keyType, dnElements: csr.dnElements } : undefined);
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
        // The profile's rules for these elements (the certificate's profile; for migrate, the one it enters).
        const c = certificate!;
        changes = { ...changes, ...applyElementRules(profile, { labels: c.labels, owner: c.owner ?? null, team: c.team ?? null, contactEmail: c.contactEmail ?? null }, changes, workflow === 'migrate') } as typeof changes;
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
        plan.changes = { ...requested, ...applyElementRules(profile, { labels: [], owner: null, team: null, contactEmail: null }, requested, true) } as typeof requested;
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
            await this.event(trx, { tenant, code: 'CERTIFICATE-MIGRATED', principal: principal.identifier, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId: id, from: before?.profile ?? null, to: patch.profile } });
          } else {
            await this.event(trx, { tenant, code: 'CERTIFICATE-UPDATED', principal: principal.identifier, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId: id, changed: Object.keys(changes) } });
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
          await this.event(trx, { tenant, code: 'CERTIFICATE-RECOVERED', principal: principal.identifier, objectType: 'certificate', objectId: certificate._id, payload: { requestId: id, requester: r.requester ?? null } });
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
          await this.event(trx, { tenant, code: 'CERTIFICATE-ENROLL-IMPORTED', principal: principal.identifier, objectType: 'certificate', objectId: certificate._id, payload: { requestId: id, profile: r.profile, escrowed } });
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
    this.written.set(waitKey(tenant, id), { known: current });
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
      this.written.delete(waitKey(tenant, id));
      const stored = current();
      if (stored) await this.fail(tenant, stored, (err as Error).message);
      throw err;
    }
    const written = this.written.get(waitKey(tenant, id))?.done;
    this.written.delete(waitKey(tenant, id));
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
      await this.event(trx, { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: current.request._id, payload: { ...this.requestPayload(current.request), error } });
    });
  }

  private async complete(trx: Knex.Transaction, tenant: string, stored: StoredRequest, certificateId: string): Promise<StoredRequest> {
    const done = await this.transition(trx, stored, tenant, { status: 'completed', certificateId, retryAt: null, error: null });
    await this.event(trx, { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: stored.request._id, payload: { ...this.requestPayload(stored.request), certificateId } });
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
      const updated = await this.transition(trx, current, tenant, { expirationDate: expiresAt });
      await this.event(trx, { tenant, code: 'CHALLENGE-ISSUED', principal: principal.identifier, objectType: 'request', objectId: current.request._id, payload: { ...this.requestPayload(current.request), expiresAt } });
      return updated;
    });
  }

  /** POST /api/v1/challenge/submit: the challenge authorizes one enrollment with this CSR. */
  async consumeChallenge(tenant: string, body: { challenge?: unknown; csr?: unknown }): Promise<RequestAnswer> {
    if (typeof body.challenge !== 'string' || body.challenge === '' || typeof body.csr !== 'string') throw new ProblemError('CHAL-002', { message: 'The body needs challenge and csr' });
    const hash = hashChallenge(body.challenge);
    const row = (await this.knex('request_challenges').where({ hash, tenant }).first()) as { request_id: string; expires_at: number | string; consumed_at: number | string | null } | undefined;
    if (!row) throw new ProblemError('CHAL-003');
    if (row.consumed_at !== null) throw new ProblemError('CHAL-007');
    if (Number(row.expires_at) <= this.services.clock()) throw new ProblemError('CHAL-006');
    const stored = await this.store.get(tenant, row.request_id);
    if (!stored || stored.request.status !== 'approved') throw new ProblemError('CHAL-007');
    const profile = await this.deps.profiles.require(tenant, stored.request.profile!);
    const csr = parseCsr(body.csr, 'enroll');
    // Checked before the challenge is spent: a bad CSR leaves it usable.
    const resolved = this.deps.profiles.resolve(profile, 'enroll', { ...stored.request.template, csr: csr.pem }, { subject: csr.dn, sans: csr.sans, keyType: csr.keyType, dnElements: csr.dnElements });
    if (resolved.mode !== 'decentralized') throw new ProblemError('CHAL-002', { message: 'A challenge enrollment is decentralized: the CSR carries the key' });
    const plan: Plan = { ...((stored.request.requestedX509Data ?? {}) as Plan), ...planOf(resolved), csr: csr.pem, challengeMode: true };
    const ready = await this.knex.transaction(async (trx) => {
      const spent = await trx('request_challenges').where({ hash, tenant }).whereNull('consumed_at').update({ consumed_at: this.services.clock() });
      if (spent === 0) throw new ProblemError('CHAL-007');
      await this.secrets.drop(trx, tenant, stored.request._id, ['challenge']);
      const updated = await this.transition(trx, stored, tenant, { requestedX509Data: plan, labels: resolved.labels, metadata: resolved.metadata, holderId: holderOf(resolved.subject) });
      await this.event(trx, { tenant, code: 'CHALLENGE-CONSUMED', objectType: 'request', objectId: stored.request._id, payload: this.requestPayload(stored.request) });
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
      const next = await this.transition(trx, stored, tenant, { status: 'approved', approver: principal.identifier, approverComment: env.approverComment ?? null });
      await this.event(trx, { tenant, code: L.requestApproved, principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: { ...this.requestPayload(stored.request), approver: principal.identifier } });
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
      const next = await this.transition(trx, stored, tenant, { status: 'denied', approver: principal.identifier, approverComment: env.approverComment ?? null });
      await this.secrets.drop(trx, tenant, stored.request._id, ['key', 'password', 'import-key']);
      await this.event(trx, { tenant, code: L.requestDenied, principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: { ...this.requestPayload(stored.request), approver: principal.identifier } });
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
      const next = await this.transition(trx, stored, tenant, { status: 'canceled' });
      await this.secrets.drop(trx, tenant, stored.request._id, ['key', 'password', 'import-key']);
      await this.event(trx, { tenant, code: 'REQUEST-CANCELED', principal: principal.identifier, objectType: 'request', objectId: stored.request._id, payload: this.requestPayload(stored.request) });
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

  // ---------------------------------------------------------------- completion handlers

  /** CompletionHandlers.issued: the certificate once, the request completed, the event — in `trx`. */
  async issued(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalIssue): Promise<void> {
    // A caller on this node waiting for this issuance knows the request: only its row is read then.
    const known = this.written.get(waitKey(tenant, requestId))?.known();
    const stored = known ? await this.store.getKnowing(tenant, requestId, known, { trx }) : await this.store.get(tenant, requestId, { trx });
    if (!stored || stored.request.status !== 'approved') return;
    const r = stored.request;
    const plan = (r.requestedX509Data ?? {}) as Plan;
    const lifecycle = r.workflow === 'renew' ? L.renewed : L.issued;
    if (outcome.status === 'rejected') {
      await this.store.update(tenant, requestId, stored.version, { status: 'denied', error: outcome.reason, retryAt: null }, { trx, base: stored });
      await this.secrets.drop(trx, tenant, requestId, ['key', 'password']);
      await this.eventsIn(trx, [
        { tenant, code: lifecycle, status: 'failure', objectType: 'certificate', objectId: null, payload: { requestId, profile: r.profile, workflow: r.workflow, reason: outcome.reason } },
        { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: requestId, payload: { ...this.requestPayload(r), error: outcome.reason } },
      ]);
      return;
    }
    const repo = this.services.inventory.repository;
    // A decentralized enrollment (the key is the requester's, behind the CSR) has no key secret.
    const keyPem = plan.mode === 'decentralized' ? null : await this.secrets.peek(trx, tenant, requestId, 'key');
    const escrowed = Boolean(keyPem && plan.escrow);
    const metadata: KeyValue[] = [...r.metadata.filter((m) => m.key !== 'pki_connector'), { key: 'pki_connector', value: plan.pkiConnector ?? '' }];
    if (r.workflow === 'renew' && r.certificateId) metadata.push({ key: 'previous_certificate_id', value: r.certificateId });
    let certificateId: string;
    let certificate: CertificateObject | null = null;
    let parsed: { dn: string; serial: string } | undefined;
    try {
      const inserted = await repo.insert(
        tenant,
        {
          certificate: outcome.certificatePem,
          module: r.module,
          profile: r.profile,
          owner: plan.owner ?? null,
          team: plan.team ?? null,
          contactEmail: plan.contactEmail ?? null,
          labels: r.labels,
          metadata,
          holderId: r.holderId,
          escrowed,
        },
        { trx },
      );
      certificateId = inserted._id;
      certificate = inserted;
    } catch (err) {
      // Recorded already (a retry after a crash, or the same certificate twice): link it.
      if (!(err instanceof ProblemError && err.code === 'CRT-004')) throw err;
      const again = parseCertificatePem(outcome.certificatePem);
      parsed = again;
      certificateId = (await repo.idOfThumbprint(tenant, again.thumbprint, trx))!;
    }
    if (keyPem) {
      const password = await this.secrets.peek(trx, tenant, requestId, 'password');
      const p12 = encodePkcs12({ privateKeyPkcs8Der: derOf(keyPem), certificatesDer: [derOf(outcome.certificatePem), ...outcome.chainPem.map(derOf)], password: password ?? '', friendlyName: plan.subject });
      await this.secrets.put(trx, tenant, requestId, 'pkcs12', Buffer.from(p12).toString('base64'));
      if (escrowed) await this.secrets.escrow(trx, tenant, certificateId, requestId, keyPem);
      await this.secrets.drop(trx, tenant, requestId, ['key']);
    }
    if (r.workflow === 'renew' && r.certificateId && r.certificateId !== certificateId) {
      const previous = await repo.get(tenant, r.certificateId, trx);
      if (previous) await repo.update(tenant, previous._id, { metadata: [...previous.metadata.filter((m) => m.key !== 'renewed_certificate_id'), { key: 'renewed_certificate_id', value: certificateId }] }, { trx });
    }
    // What the inventory parsed of it (the certificate is parsed again only when it was recorded already).
    const info = certificate ? { dn: certificate.dn, serial: certificate.serial } : (parsed ?? parseCertificatePem(outcome.certificatePem));
    const completed = await this.store.update(tenant, requestId, stored.version, { status: 'completed', certificateId, retryAt: null, error: null }, { trx, base: stored });
    const waiting = this.written.get(waitKey(tenant, requestId));
    if (waiting && certificate && completed.outcome === 'updated') {
      const done = { stored: completed.stored, certificate };
      // Handed to the caller once committed (a rolled-back completion hands nothing).
      trx.executionPromise.then(
        () => {
          if (this.written.get(waitKey(tenant, requestId)) === waiting) waiting.done = done;
        },
        () => undefined,
      );
    }
    await this.eventsIn(trx, [
      {
        tenant,
        code: lifecycle,
        principal: r.requester ?? null,
        objectType: 'certificate',
        objectId: certificateId,
        payload: r.workflow === 'renew' ? { requestId, profile: r.profile, previousCertificateId: r.certificateId ?? null } : { requestId, profile: r.profile, workflow: r.workflow, pkiConnector: plan.pkiConnector ?? null, dn: info.dn, serial: info.serial },
      },
      { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: requestId, payload: { ...this.requestPayload(r), certificateId } },
    ]);
  }

  /** CompletionHandlers.revoked: the inventory certificate revoked, the request completed — in `trx`. */
  async revoked(trx: Knex.Transaction, tenant: string, requestId: string, outcome: FinalRevoke): Promise<void> {
    const stored = await this.store.get(tenant, requestId, { trx });
    if (!stored || stored.request.status !== 'approved') return;
    const r = stored.request;
    const plan = (r.requestedX509Data ?? {}) as Plan;
    if (outcome.status === 'rejected') {
      await this.store.update(tenant, requestId, stored.version, { status: 'denied', error: outcome.reason, retryAt: null }, { trx, base: stored });
      await this.eventsIn(trx, [
        { tenant, code: L.revoked, status: 'failure', objectType: 'certificate', objectId: r.certificateId ?? null, payload: { requestId, profile: r.profile, reason: outcome.reason } },
        { tenant, code: 'REQUEST-FAILED', status: 'failure', objectType: 'request', objectId: requestId, payload: { ...this.requestPayload(r), error: outcome.reason } },
      ]);
      return;
    }
    const reason = plan.reason?.upper ?? 'UNSPECIFIED';
    await this.services.inventory.repository.update(tenant, r.certificateId!, { revoked: true, revocationDate: this.services.clock(), revocationReason: reason }, { trx });
    await this.store.update(tenant, requestId, stored.version, { status: 'completed', retryAt: null, error: null }, { trx, base: stored });
    await this.eventsIn(trx, [
      { tenant, code: L.revoked, principal: r.requester ?? null, objectType: 'certificate', objectId: r.certificateId!, payload: { requestId, profile: r.profile, reason } },
      { tenant, code: 'REQUEST-COMPLETED', objectType: 'request', objectId: requestId, payload: { ...this.requestPayload(r), certificateId: r.certificateId ?? null } },
    ]);
  }
}

// ---------------------------------------------------------------- helpers

/** The key of an issuance a caller waits for (RequestWorkflows.written). */
const waitKey = (tenant: string, requestId: string): string => `${tenant}\u0000${requestId}`;

function parseCsr(pem: string, workflow: Workflow): CsrInfo {
  let csr: CsrInfo;
  try {
    csr = parseCsrPem(pem);
  } catch (err) {
    throw new ProblemError('WEBRA-ENROLL-006', { detail: (err as Error).message });
  }
  if (!csr.signatureValid) throw new ProblemError('WEBRA-ENROLL-006', { message: 'The CSR is not signed by its own key', detail: workflow });
  return csr;
}

function planOf(resolved: ResolvedTemplate): Plan {
  return {
    subject: resolved.subject,
    sans: resolved.sans,
    keyType: resolved.keyType,
    mode: resolved.mode,
    validityDays: resolved.validityDays,
    keyUsage: resolved.keyUsage,
    extendedKeyUsage: resolved.extendedKeyUsage,
    ...(resolved.owner ? { owner: resolved.owner } : {}),
    ...(resolved.team ? { team: resolved.team } : {}),
    ...(resolved.contactEmail ? { contactEmail: resolved.contactEmail } : {}),
  };
}

/** The holder id of a subject: its first CN, else the whole DN. */
function holderOf(subject: string | undefined): string | undefined {
  if (!subject) return undefined;
  const cn = /(?:^|,)\s*CN=((?:\\.|[^,])*)/i.exec(subject);
  return (cn?.[1] ?? subject).slice(0, 191);
}

function subjectElementsOf(certificate: CertificateObject): { element: string; value: string }[] {
  const counts = new Map<string, number>();
  const out: { element: string; value: string }[] = [];
  for (const part of splitDn(certificate.dn)) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const type = part.slice(0, eq).trim().toLowerCase();
    const n = (counts.get(type) ?? 0) + 1;
    counts.set(type, n);
    out.push({ element: `${type}.${n}`, value: part.slice(eq + 1).replace(/\\(.)/g, '$1') });
  }
  return out;
}

function splitDn(dn: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < dn.length; i++) {
    const c = dn[i]!;
    if (c === '\\' && i + 1 < dn.length) {
      current += c + dn[++i]!;
    } else if (c === ',') {
      out.push(current);
      current = '';
    } else current += c;
  }
  if (current) out.push(current);
  return out;
}

function sansElementsOf(certificate: CertificateObject): { type: string; value: string[] }[] {
  const byType = new Map<string, string[]>();
  for (const s of certificate.subjectAlternateNames ?? []) byType.set(s.sanType, [...(byType.get(s.sanType) ?? []), s.value]);
  return [...byType].map(([type, value]) => ({ type, value }));
}

function createPublicKeyDer(key: KeyObject): Buffer {
  return Buffer.from(createPublicKey(key).export({ type: 'spki', format: 'der' }));
}

function publicSpkiOfCertificate(pem: string): Buffer {
  return Buffer.from(createPublicKey(pem).export({ type: 'spki', format: 'der' }));
}

