import type { ComputedValues } from './computation.js';
import type { Knex } from 'knex';
import type { EventStore } from '../events/store.js';
import { isUniqueViolation } from '../db/unique.js';
import type { ResolvedPrincipal } from '../security/principals/resolver.js';
import { defaultProfile } from './model.js';
import { profileNotFound, ProfileRepository } from './repository.js';
import { rightsOf } from './rights.js';
import { resolveTemplate, templateObject } from './template.js';
import type { CertificateProfile, CsrFacts, ProfileService, ResolvedTemplate, Rights, Workflow } from './types.js';

/** The ProfileService of core/profiles/types.ts over the repository (migration 0015). */
export class Profiles implements ProfileService {
  readonly repository: ProfileRepository;

  constructor(knex: Knex, events: EventStore, clock: () => number) {
    this.repository = new ProfileRepository(knex, events, clock);
  }

  /** The profile as the request workflows see it: read again after PROFILE_TRUST_MS (repository.ts). */
  async get(tenant: string, name: string): Promise<CertificateProfile | null> {
    return (await this.repository.findTrusted(tenant, name))?.profile ?? null;
  }

  async require(tenant: string, name: string): Promise<CertificateProfile> {
    const found = await this.get(tenant, name);
    if (!found || !found.enabled) throw profileNotFound(name);
    return found;
  }

  async list(tenant: string): Promise<CertificateProfile[]> {
    return (await this.repository.list(tenant)).map((s) => s.profile);
  }

  /** Creates the profile with every default, bound to `connector`, unless it exists; two nodes at once create it once (PROFILE-CREATED, principal null). */
  async ensureDefault(tenant: string, name: string, connector: string, protocols?: CertificateProfile['protocols']): Promise<void> {
    if (await this.repository.find(tenant, name)) return;
    try {
      const profile = defaultProfile(name, connector);
      if (protocols && Object.keys(protocols).length) profile.protocols = structuredClone(protocols);
      await this.repository.create(tenant, profile, null);
    } catch (err) {
      // Another node (or call) created it first: PRF-004 from the unique key.
      if ((err as { code?: string }).code === 'PRF-004' || isUniqueViolation(err)) return;
      throw err;
    }
  }

  templateOf(profile: CertificateProfile, workflow: Workflow, submitted?: Record<string, unknown>, csr?: CsrFacts): Record<string, unknown> {
    return templateObject(profile, workflow, submitted, csr);
  }

  resolve(profile: CertificateProfile, workflow: Workflow, submitted: Record<string, unknown>, csr?: CsrFacts, computed?: ComputedValues): ResolvedTemplate {
    return resolveTemplate(profile, workflow, submitted, csr, computed);
  }

  rightsOf(profile: CertificateProfile, principal: ResolvedPrincipal, workflow: Workflow): Rights {
    return rightsOf(profile, principal, workflow);
  }
}
