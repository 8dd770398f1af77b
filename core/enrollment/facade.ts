/**
 * `ctx.enrollment` (SDK 1.8): the narrow facade protocol plugins enroll through. Each call is a request of
 * the workflow (core/requests) submitted by the protocol's requester, so permissions, approval, events,
 * triggers and the PKI queue apply as for WebRA. The requester holds the profile's lifecycle right for the
 * workflow because the protocol is enabled on the profile (`protocols.<name>.enabled`); a protocol whose
 * settings say `requireApproval: true` only gets the request right, so its requests wait for an approver.
 */
import type { EnrollInput, EnrollmentFacade, EnrollmentOutcome, EnrollmentRefusal, ProtocolProfile, RenewInput, RevokeInput } from '@certwright/sdk';
import { ProblemError } from '../errors/index.js';
import { parseCertificatePem } from '../pki/x509/parse.js';
import type { PkiGateway } from '../pki/connectors/types.js';
import type { CertificateProfile, ProfileService, Workflow } from '../profiles/types.js';
import type { RequestAnswer } from '../requests/workflow/plan.js';
import type { RequestWorkflows } from '../requests/workflow/service.js';
import { lifecyclePermission } from '../security/permissions/catalogue.js';
import { PermissionSet } from '../security/permissions/permission-set.js';
import type { ResolvedPrincipal } from '../security/principals/resolver.js';
import type { CoreServices } from '../services.js';

const DEFAULT_TENANT = 'default';

interface FacadeDeps {
  services: CoreServices;
  profiles: ProfileService;
  gateway: PkiGateway;
  workflows: RequestWorkflows;
}

/** The protocol's requester, holding exactly the right the profile's protocol settings give it. */
function requesterOf(protocol: string, identifier: string, tenant: string, profile: CertificateProfile, workflow: Workflow, service = false): ResolvedPrincipal {
  const right = profile.protocols?.[protocol]?.requireApproval === true && !service ? 'request' : 'direct';
  return {
    identifier,
    name: null,
    email: null,
    tenant,
    identityProviderName: protocol,
    identityProviderType: protocol,
    permissions: new PermissionSet([{ value: lifecyclePermission(profile.module, profile.name, workflow, right) }]),
    ownPermissions: [],
    roles: [],
    teams: [],
    preferences: {},
  };
}

function refusalOf(err: unknown): EnrollmentRefusal {
  if (err instanceof ProblemError) return { refused: true, code: err.code, message: err.detail ? `${err.message}: ${err.detail}` : err.message };
  throw err;
}

export function enrollmentFacade(deps: FacadeDeps): EnrollmentFacade {
  const { services, profiles, gateway, workflows } = deps;

  const outcomeOf = async (tenant: string, answer: RequestAnswer): Promise<EnrollmentOutcome> => {
    const out: EnrollmentOutcome = { requestId: answer._id, status: answer.status };
    if (answer.status === 'completed' && answer.certificatePem && (answer.workflow === 'enroll' || answer.workflow === 'renew')) {
      out.certificatePem = answer.certificatePem;
      if (answer.certificate) out.certificateId = answer.certificate._id;
      const profile = answer.profile ? await profiles.get(tenant, answer.profile) : null;
      out.chainPem = profile ? await gateway.caChain(tenant, profile.pkiConnector).catch(() => []) : [];
    }
    const error = (answer as { error?: unknown }).error;
    if (typeof error === 'string' && error) out.error = error;
    return out;
  };

  const thumbprintOf = (pem: string): string | null => {
    try {
      return parseCertificatePem(pem).thumbprint;
    } catch {
      return null;
    }
  };

  const inventoryCertificate = async (tenant: string, pem: string) => {
    const thumbprint = thumbprintOf(pem);
    return thumbprint ? services.inventory.repository.getByThumbprint(tenant, thumbprint) : null;
  };

  const enabledProfile = async (protocol: string, name: string, tenant: string): Promise<CertificateProfile | null> => {
    const profile = await profiles.get(tenant, name);
    if (!profile || !profile.enabled || profile.protocols?.[protocol]?.enabled !== true) return null;
    return profile;
  };

  return {
    async profile(protocol, name, tenant = DEFAULT_TENANT): Promise<ProtocolProfile | null> {
      const profile = await enabledProfile(protocol, name, tenant);
      if (!profile) return null;
      const text = profile.description?.find((d) => d.lang === 'en') ?? profile.description?.[0];
      return {
        name: profile.name,
        ...(text?.value ? { description: text.value } : {}),
        settings: structuredClone(profile.protocols![protocol]!) as ProtocolProfile['settings'],
        validityDays: profile.validityDays,
        authorizedKeyTypes: [...profile.keyPolicy.authorizedKeyTypes],
      };
    },

    async enroll(input: EnrollInput) {
      const tenant = input.tenant ?? DEFAULT_TENANT;
      const profile = await enabledProfile(input.protocol, input.profile, tenant);
      if (!profile) return { refused: true, code: 'PRF-003', message: `Profile ${input.profile} does not exist, is disabled or does not serve ${input.protocol}` };
      const template: Record<string, unknown> = { csr: input.csrPem };
      if (input.subject) template.subject = input.subject;
      if (input.sans) template.sans = input.sans;
      try {
        const answer = await workflows.submit(
          { tenant, principal: requesterOf(input.protocol, input.requester, tenant, profile, 'enroll', input.service === true) },
          { module: input.protocol, workflow: 'enroll', profile: profile.name, template },
          { protocol: input.protocol },
        );
        return await outcomeOf(tenant, answer);
      } catch (err) {
        return refusalOf(err);
      }
    },

    async renew(input: RenewInput) {
      const tenant = input.tenant ?? DEFAULT_TENANT;
      const certificate = await inventoryCertificate(tenant, input.certificatePem);
      if (!certificate) return { refused: true, code: 'CRT-003', message: 'The certificate is not known' };
      const profile = certificate.profile ? await enabledProfile(input.protocol, certificate.profile, tenant) : null;
      if (!profile) return { refused: true, code: 'PRF-003', message: `The certificate's profile does not serve ${input.protocol}` };
      const template: Record<string, unknown> = { csr: input.csrPem };
      if (input.subject) template.subject = input.subject;
      if (input.sans) template.sans = input.sans;
      try {
        const answer = await workflows.submit(
          { tenant, principal: requesterOf(input.protocol, input.requester, tenant, profile, 'renew') },
          { module: input.protocol, workflow: 'renew', certificateId: certificate._id, template },
          { protocol: input.protocol },
        );
        return await outcomeOf(tenant, answer);
      } catch (err) {
        return refusalOf(err);
      }
    },

    async revoke(input: RevokeInput) {
      const tenant = input.tenant ?? DEFAULT_TENANT;
      if (!thumbprintOf(input.certificatePem)) return { refused: true, code: 'PKI-001', message: 'The certificate does not parse' };
      const certificate = await inventoryCertificate(tenant, input.certificatePem);
      if (!certificate) return { refused: true, code: 'CRT-003', message: 'The certificate is not known' };
      const profile = certificate.profile ? await enabledProfile(input.protocol, certificate.profile, tenant) : null;
      if (!profile) return { refused: true, code: 'PRF-003', message: `The certificate's profile does not serve ${input.protocol}` };
      try {
        const answer = await workflows.submit(
          { tenant, principal: requesterOf(input.protocol, input.requester, tenant, profile, 'revoke') },
          { module: input.protocol, workflow: 'revoke', certificateId: certificate._id, revocationReason: input.reason ?? 'unspecified' },
          { protocol: input.protocol },
        );
        return await outcomeOf(tenant, answer);
      } catch (err) {
        return refusalOf(err);
      }
    },

    async request(requestId, tenant = DEFAULT_TENANT) {
      const stored = await workflows.store.get(tenant, requestId);
      if (!stored) return null;
      return outcomeOf(tenant, await workflows.answer(tenant, stored, null));
    },

    async consumeChallenge(challenge, csrPem, tenant = DEFAULT_TENANT, scope) {
      try {
        return await outcomeOf(tenant, await workflows.consumeChallenge(tenant, { challenge, csr: csrPem }, scope));
      } catch (err) {
        return refusalOf(err);
      }
    },

    async newChallenge(input) {
      const tenant = input.tenant ?? DEFAULT_TENANT;
      const profile = await enabledProfile(input.protocol, input.profile, tenant);
      if (!profile) return { refused: true, code: 'PRF-003', message: `Profile ${input.profile} does not exist, is disabled or does not serve ${input.protocol}` };
      try {
        // Submitted as an administrator's challenge request would be (no `via`): approved at once, the challenge answered once.
        const answer = await workflows.submit(
          { tenant, principal: requesterOf(input.protocol, input.requester, tenant, profile, 'enroll', true) },
          { module: input.protocol, workflow: 'enroll', profile: profile.name, template: {} },
        );
        const challenge = answer.password?.value;
        if (typeof challenge !== 'string') return { refused: true, code: 'REQ-012', message: `${input.protocol} challenges are not served on profile ${profile.name}` };
        return { challenge, requestId: answer._id, expiresAt: Number(answer.expirationDate ?? 0) };
      } catch (err) {
        return refusalOf(err);
      }
    },

    async certificatesByPublicKey(publicKeyThumbprint, tenant = DEFAULT_TENANT) {
      if (!/^[0-9a-fA-F]{64}$/.test(publicKeyThumbprint)) return [];
      const found = await services.inventory.repository.inForceByPublicKey(tenant, publicKeyThumbprint);
      return found.map((c) => ({ id: c._id, certificatePem: c.certificate, profile: c.profile ?? null, revoked: Boolean(c.revoked) }));
    },

    async certificateBySerial(serialHex, tenant = DEFAULT_TENANT) {
      // As the inventory stores it: whole bytes, no leading zero byte.
      let serial = serialHex.toLowerCase();
      if (!/^[0-9a-f]{1,128}$/.test(serial)) return [];
      if (serial.length % 2) serial = `0${serial}`;
      while (serial.length > 2 && serial.startsWith('00')) serial = serial.slice(2);
      const found = await services.inventory.repository.bySerial(tenant, serial);
      return found.map((c) => ({ id: c._id, certificatePem: c.certificate, profile: c.profile ?? null, revoked: Boolean(c.revoked) }));
    },

    async crl(name, tenant = DEFAULT_TENANT) {
      const profile = await profiles.get(tenant, name);
      return profile ? gateway.crl(tenant, profile.pkiConnector) : null;
    },

    async caChain(name, tenant = DEFAULT_TENANT) {
      const profile = await profiles.get(tenant, name);
      if (!profile) return [];
      return gateway.caChain(tenant, profile.pkiConnector);
    },

    async certificate(certificatePem, tenant = DEFAULT_TENANT) {
      const found = await inventoryCertificate(tenant, certificatePem);
      return found ? { id: found._id, profile: found.profile ?? null, revoked: Boolean(found.revoked) } : null;
    },
  };
}

/**
 * The facade handed to plugins before enrollment is registered (the plugin manager is built first): calls
 * reach the real facade once `bind` ran, at boot, before any plugin registers.
 */
export function lateEnrollmentFacade(): EnrollmentFacade & { bind(facade: EnrollmentFacade): void } {
  let target: EnrollmentFacade | undefined;
  const current = (): EnrollmentFacade => {
    if (!target) throw new Error('the enrollment facade is not ready yet');
    return target;
  };
  return {
    bind: (facade) => {
      target = facade;
    },
    profile: (...a) => current().profile(...a),
    enroll: (...a) => current().enroll(...a),
    renew: (...a) => current().renew(...a),
    newChallenge: (...a) => current().newChallenge(...a),
    certificateBySerial: (...a) => current().certificateBySerial(...a),
    certificatesByPublicKey: (...a) => current().certificatesByPublicKey(...a),
    revoke: (...a) => current().revoke(...a),
    request: (...a) => current().request(...a),
    caChain: (...a) => current().caChain(...a),
    crl: (...a) => current().crl(...a),
    consumeChallenge: (...a) => current().consumeChallenge(...a),
    certificate: (...a) => current().certificate(...a),
  };
}
