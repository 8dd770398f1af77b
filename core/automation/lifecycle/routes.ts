import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigRegistry } from '../../config-objects/registry.js';
import { ProblemError } from '../../errors/index.js';
import type { InventoryContext } from '../../inventory/index.js';
import { parseCertificatePem } from '../../pki/x509/parse.js';
import { rightsOf } from '../../profiles/rights.js';
import type { CertificateProfile, ProfileService } from '../../profiles/types.js';
import { peerCertificatePem, POP_PROVIDER } from '../../security/auth/authenticator.js';
import { AUTOMATION_POLICY_TYPE } from '../policies/config-type.js';
import { renewalCause, type AutomationPolicy } from '../policies/model.js';
import type { LifecycleRunner } from './runner.js';

const BASE = '/api/v1/automation/lifecycle';
const READ = 'configuration:automation:read';
const TAGS = ['automation'];
const params = { type: 'object', required: ['policy'], properties: { policy: { type: 'string', maxLength: 191, description: 'The automation policy' } } } as const;

interface Deps {
  runner: LifecycleRunner;
  registry: ConfigRegistry;
  profiles: () => ProfileService;
  inventory: InventoryContext;
  clock: () => number;
}

/**
 * The automation client's view of a policy (client-compat §7, v1 Go `automation` package): how to enroll under
 * it (`GET …/lifecycle/{policy}`: `{module, profile, keyType, …}`) and whether its current certificate complies
 * (`GET …/lifecycle/{policy}/verify`: 204 compliant; 200 `{runnable, renewable}` otherwise: runnable when the
 * execution policy lets it act now, renewable when it holds a certificate of the policy to renew, else it
 * enrolls). Its certificate is the one it proves: a proof of possession (X-JWT-CERT-POP), or the client
 * certificate of the TLS connection. Open to whoever may enroll or renew on the policy's profile (or read
 * automation configuration), and to a holder's proof of possession (verify only: authenticator.ts POP_ROUTES).
 */
export function mountLifecycleRoutes(app: FastifyInstance, deps: Deps): void {
  const load = async (request: FastifyRequest<{ Params: { policy: string } }>): Promise<{ policy: AutomationPolicy; profile: CertificateProfile }> => {
    const policy = await deps.runner.policy(request.tenant, request.params.policy);
    if (!policy) throw deps.registry.problem(deps.registry.get(AUTOMATION_POLICY_TYPE)!, 'unknown', `No automation policy ${request.params.policy}`);
    const profile = await deps.profiles().get(request.tenant, policy.profile);
    if (!profile) throw new ProblemError('PRF-003', { detail: `profile ${policy.profile} of automation policy ${policy.name}` });
    const principal = request.principal!;
    // A holder proving its certificate (verify only) learns about that certificate alone.
    const holder = principal.identityProviderName === POP_PROVIDER;
    const may = holder || principal.permissions.allows(READ) || (['enroll', 'renew'] as const).some((w) => rightsOf(profile, principal, w).request);
    if (!may) throw new ProblemError('SEC-PERM-001', { message: `Enrolling or renewing on profile ${profile.name}, or ${READ}, is needed to read automation policy ${policy.name}` });
    return { policy, profile };
  };

  app.get<{ Params: { policy: string } }>(`${BASE}/:policy`, {
    config: { capability: 'configuration', access: 'authenticated' },
    schema: {
      tags: TAGS,
      summary: "How an automation client enrolls under a policy: its profile's module, key type and modes",
      params,
      response: {
        200: {
          type: 'object',
          additionalProperties: true,
          properties: {
            module: { type: 'string' },
            profile: { type: 'string' },
            keyType: { type: 'string' },
            authorizationMode: { type: 'string' },
            enrollmentMode: { type: 'string', enum: ['centralized', 'decentralized'] },
            csrInfoIgnored: { type: 'boolean' },
            trustChains: { type: 'array', items: { type: 'string' } },
            executionPolicy: { type: ['string', 'null'] },
            renewal: { type: 'object', additionalProperties: true },
          },
        },
      },
    },
    handler: async (request) => {
      const { policy, profile } = await load(request);
      return {
        module: profile.module,
        profile: profile.name,
        keyType: profile.keyPolicy.defaultKeyType,
        authorizationMode: profile.authorizationMode,
        // The client makes its key when the profile takes CSRs (the holder's key never leaves it).
        enrollmentMode: profile.keyPolicy.decentralized ? 'decentralized' : 'centralized',
        // The profile's subject and SAN rules decide; what the CSR says is checked, not taken as is.
        csrInfoIgnored: false,
        trustChains: policy.trustChains ?? [],
        executionPolicy: policy.executionPolicy ?? null,
        renewal: policy.renewal,
      };
    },
  });

  app.get<{ Params: { policy: string } }>(`${BASE}/:policy/verify`, {
    config: { capability: 'configuration', access: 'authenticated' },
    schema: {
      tags: TAGS,
      summary: "Whether the caller's certificate complies with the policy: 204 yes; 200 {runnable, renewable} when it must renew or enroll",
      params,
      response: {
        200: { type: 'object', required: ['runnable', 'renewable'], properties: { runnable: { type: 'boolean' }, renewable: { type: 'boolean' }, reason: { type: 'string' } } },
        204: { type: 'null', description: 'Compliant: nothing to do' },
      },
    },
    handler: async (request, reply) => {
      const { policy } = await load(request);
      const now = deps.clock();
      const runnable = await deps.runner.runnable(request.tenant, policy, now);
      const thumbprint = callerThumbprint(request);
      const certificate = thumbprint ? await deps.inventory.repository.getByThumbprint(request.tenant, thumbprint) : null;
      if (!certificate || certificate.profile !== policy.profile) {
        return { runnable, renewable: false, reason: certificate ? `the certificate belongs to profile ${certificate.profile ?? 'none'}, not ${policy.profile}` : 'no certificate of the policy: enroll' };
      }
      if (certificate.revoked || certificate.notAfter <= now) return { runnable, renewable: false, reason: certificate.revoked ? 'the certificate is revoked: enroll' : 'the certificate has expired: enroll' };
      const cause = renewalCause(policy, { _id: certificate._id, notBefore: certificate.notBefore, notAfter: certificate.notAfter, revoked: false, signingAlgorithm: certificate.signingAlgorithm, issuer: certificate.issuer }, now);
      if (!cause) return reply.code(204).send();
      return { runnable, renewable: true, reason: cause === 'expiry' ? 'in its renewal window' : 'not compliant with the policy' };
    },
  });
}

/** The SHA-1 thumbprint of the certificate the caller proves: its proof of possession, or its TLS client certificate. */
function callerThumbprint(request: FastifyRequest): string | null {
  const principal = request.principal!;
  if (principal.identityProviderName === POP_PROVIDER) return principal.identifier.replace(/^pop:/, '');
  const pem = peerCertificatePem(request);
  if (!pem) return null;
  try {
    return parseCertificatePem(pem).thumbprint;
  } catch {
    return null;
  }
}
