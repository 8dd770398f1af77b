import { isUniqueViolation } from '../../db/unique.js';
import { ProblemError } from '../../errors/index.js';
import { passwordProblems } from '../password-policies/policy.js';
import type { PasswordPolicyView } from '../password-policies/service.js';
import type { SecurityRouteContext } from '../route-context.js';
import type { LocalIdentity } from '../store/local-identities.js';

/** A local account as the API shows it: whether it has a password and since when, never the password. */
export interface LocalIdentityView {
  _id: string;
  identifier: string;
  name: string | null;
  email: string | null;
  enabled: boolean;
  hasPassword: boolean;
  passwordChangedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewLocalIdentity {
  identifier: string;
  name: string | null;
  email: string | null;
  enabled: boolean;
}

/** Fields a PUT changes; those left out keep their value. */
export type LocalIdentityChanges = Partial<Pick<NewLocalIdentity, 'name' | 'email' | 'enabled'>>;

/** Who asks, for events and the self-lockout rule. */
export interface Actor {
  tenant: string;
  identifier: string;
}

const view = (i: LocalIdentity): LocalIdentityView => ({
  _id: i.id,
  identifier: i.identifier,
  name: i.name,
  email: i.email,
  enabled: i.enabled,
  hasPassword: i.hasSecret,
  passwordChangedAt: i.secretChangedAt,
  createdAt: i.createdAt,
  updatedAt: i.updatedAt,
});

type Deps = Pick<SecurityRouteContext, 'identities' | 'hasher' | 'passwordPolicies' | 'events' | 'invalidate' | 'throttle'>;

/**
 * Local accounts (/api/v1/security/identity/locals/). Every password set is checked against the
 * tenant's Default policy and stored as an argon2id hash; every write drops this node's credential
 * caches, so a changed or removed account stops working at once.
 */
export class LocalIdentityService {
  constructor(private readonly deps: Deps) {}

  async list(tenant: string): Promise<LocalIdentityView[]> {
    return (await this.deps.identities.list(tenant)).map(view);
  }

  async get(tenant: string, identifier: string): Promise<LocalIdentityView> {
    return view(await this.require(tenant, identifier));
  }

  async create(actor: Actor, input: NewLocalIdentity, password: string | null): Promise<LocalIdentityView> {
    const { tenant } = actor;
    if (await this.deps.identities.find(tenant, input.identifier)) throw exists(input.identifier);
    const hash = password === null ? null : await this.hashFor(tenant, password);
    let created: LocalIdentity;
    try {
      created = await this.deps.identities.insert(tenant, input, hash);
    } catch (err) {
      // Created by someone else between the check and the insert.
      if (isUniqueViolation(err)) throw exists(input.identifier);
      throw err;
    }
    this.deps.invalidate();
    await this.record(actor, 'SEC-LOCAL-CREATED', input.identifier, { name: input.name, email: input.email, enabled: input.enabled, hasPassword: hash !== null });
    return view(created);
  }

  /** Changes name, email and enabled; a password, when given, is set too (checked before anything is written). */
  async update(actor: Actor, identifier: string, changes: LocalIdentityChanges, password: string | null): Promise<LocalIdentityView> {
    const { tenant } = actor;
    await this.require(tenant, identifier);
    if (changes.enabled === false) this.refuseSelf(actor, identifier, 'disable');
    const hash = password === null ? null : await this.hashFor(tenant, password);
    await this.deps.identities.update(tenant, identifier, changes);
    if (hash !== null) await this.deps.identities.setSecretHash(tenant, identifier, hash);
    this.deps.invalidate();
    const updated = await this.deps.identities.find(tenant, identifier);
    if (!updated) throw notFound(identifier); // removed meanwhile
    await this.record(actor, 'SEC-LOCAL-UPDATED', identifier, { ...changes, passwordChanged: hash !== null });
    if (hash !== null) await this.record(actor, 'SEC-LOCAL-PASSWORD-CHANGED', identifier, { selfService: false });
    return view(updated);
  }

  async remove(actor: Actor, identifier: string): Promise<void> {
    this.refuseSelf(actor, identifier, 'delete');
    if (!(await this.deps.identities.remove(actor.tenant, identifier))) throw notFound(identifier);
    this.deps.invalidate();
    await this.record(actor, 'SEC-LOCAL-DELETED', identifier, {});
  }

  /** Sets the password of any account (an administrator, or the account itself: PATCH). */
  async setPassword(actor: Actor, identifier: string, password: string): Promise<LocalIdentityView> {
    await this.require(actor.tenant, identifier);
    return this.storePassword(actor, identifier, await this.hashFor(actor.tenant, password), actor.identifier === identifier);
  }

  /** Self-service: the caller's own password, once the current one is proven. */
  async changeOwnPassword(actor: Actor, current: string, password: string): Promise<LocalIdentityView> {
    const credential = await this.deps.identities.credentialOf(actor.tenant, actor.identifier);
    if (!credential) throw new ProblemError('SEC-LOCAL-003', { message: `"${actor.identifier}" has no local account (its password is managed elsewhere)` });
    // Guessing the current password through this route is throttled like a login (a stolen session
    // must not become a password oracle).
    const key = { kind: 'identifier', tenant: actor.tenant, value: actor.identifier } as const;
    const wait = await this.deps.throttle.locked([key]);
    if (wait > 0) {
      const seconds = Math.max(1, Math.ceil(wait / 1000));
      throw new ProblemError('SEC-RATE-001', { message: `Too many failed attempts: retry in ${seconds} s`, headers: { 'retry-after': String(seconds) } });
    }
    if (!(await this.deps.hasher.verify(credential.hash, current))) {
      await this.deps.throttle.recordFailure([key]);
      await this.record(actor, 'SEC-LOCAL-PASSWORD-CHANGED', actor.identifier, { selfService: true, reason: 'wrong current password' }, 'failure');
      throw new ProblemError('SEC-LOCAL-006');
    }
    return this.storePassword(actor, actor.identifier, await this.hashFor(actor.tenant, password), true);
  }

  /** The policy an account's password must satisfy (the same for every local account: Default). */
  async policyFor(tenant: string, identifier: string): Promise<PasswordPolicyView> {
    await this.require(tenant, identifier);
    return this.deps.passwordPolicies.forLocalAccountsView(tenant);
  }

  private async storePassword(actor: Actor, identifier: string, hash: string, selfService: boolean): Promise<LocalIdentityView> {
    const set = await this.deps.identities.setSecretHash(actor.tenant, identifier, hash);
    this.deps.invalidate();
    if (!set) throw notFound(identifier);
    await this.record(actor, 'SEC-LOCAL-PASSWORD-CHANGED', identifier, { selfService });
    return this.get(actor.tenant, identifier);
  }

  /** Checks the password against the Default policy; the refusal lists what is missing, never the password. */
  private async hashFor(tenant: string, password: string): Promise<string> {
    const policy = await this.deps.passwordPolicies.forLocalAccounts(tenant);
    const problems = password.length === 0 ? ['at least 1 character'] : passwordProblems(policy, password);
    if (problems.length > 0) {
      throw new ProblemError('SEC-LOCAL-005', { message: `The password does not satisfy the "${policy.name}" password policy: it needs ${problems.join(', ')}` });
    }
    return this.deps.hasher.hash(password);
  }

  /** An administrator cannot lock themselves out by deleting or disabling their own account. */
  private refuseSelf(actor: Actor, identifier: string, what: 'delete' | 'disable'): void {
    if (identifier === actor.identifier) {
      throw new ProblemError('SEC-LOCAL-002', { message: `You cannot ${what} your own account: ask another administrator` });
    }
  }

  private async require(tenant: string, identifier: string): Promise<LocalIdentity> {
    const found = await this.deps.identities.find(tenant, identifier);
    if (!found) throw notFound(identifier);
    return found;
  }

  private async record(actor: Actor, code: string, identifier: string, payload: Record<string, unknown>, status: 'success' | 'failure' = 'success'): Promise<void> {
    await this.deps.events.append({
      tenant: actor.tenant,
      code,
      module: 'security',
      status,
      principal: actor.identifier,
      objectType: 'local-identity',
      objectId: identifier,
      payload,
    });
  }
}

const notFound = (identifier: string): ProblemError => new ProblemError('SEC-LOCAL-003', { message: `No local identity has the identifier "${identifier}"` });
const exists = (identifier: string): ProblemError =>
  new ProblemError('SEC-LOCAL-004', { message: `A local identity with the identifier "${identifier}" already exists` });
