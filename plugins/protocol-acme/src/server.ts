/**
 * The ACME resources (RFC 8555 §7): directory, nonces, accounts, orders, authorizations, challenges,
 * finalize, certificates and revocation, for every profile with `protocols.acme.enabled`.
 */
import { createHash, createPublicKey, X509Certificate, type JsonWebKey } from 'node:crypto';
import { isIP } from 'node:net';
import type { JWK } from 'jose';
import type { EnrollmentFacade, JobsFacade, PluginConfigObjects, PluginLogger, ProtocolProfile } from '@certwright/sdk';
import { certFactsOf, parseCertId, suggestedWindow } from './ari.js';
import { csrNames } from './csr.js';
import { iso, newId, newToken } from './ids.js';
import { headerOf, parseJws, publicJwk, thumbprintOf, verifyWith, type VerifiedJws } from './jws.js';
import type { NonceStore } from './nonces.js';
import { AcmeProblem, problemOf } from './problems.js';
import type { AcmeStore, Account, Authorization, Challenge, Identifier, Order } from './store.js';

import { CHALLENGE_TYPES, VALIDATE_JOB } from './constants.js';
import { EAB_POLICY, identifierAllowed, type EabPolicy } from './eab-types.js';
import { verifyEab } from './eab.js';

export { CHALLENGE_TYPES, VALIDATE_JOB };

const REVOCATION_REASONS: Record<number, string> = { 0: 'unspecified', 1: 'keyCompromise', 3: 'affiliationChanged', 4: 'superseded', 5: 'cessationOfOperation', 9: 'privilegeWithdrawn', 10: 'aACompromise' };

export interface AcmeDeps {
  store: AcmeStore;
  nonces: NonceStore;
  enrollment: EnrollmentFacade;
  jobs: JobsFacade;
  configObjects: PluginConfigObjects;
  logger: PluginLogger;
  now: () => number;
  /** Tests and benchmarks only (index.ts validationSkipped): a challenge response makes its authorization valid at once. */
  skipValidation?: boolean;
  orderLifetimeMs: number;
}

/** What a route needs to answer: the absolute URL base of this request and the profile served. */
export interface Call {
  base: string;
  profile: ProtocolProfile;
  url: string;
}

export const settingsOf = (profile: ProtocolProfile) => {
  const s = profile.settings;
  const types = Array.isArray(s.challengeTypes) ? (s.challengeTypes as string[]).filter((t) => (CHALLENGE_TYPES as readonly string[]).includes(t)) : [...CHALLENGE_TYPES];
  return {
    challengeTypes: types.length ? types : [...CHALLENGE_TYPES],
    termsOfService: typeof s.termsOfService === 'string' ? s.termsOfService : undefined,
    website: typeof s.website === 'string' ? s.website : undefined,
    caaIdentities: Array.isArray(s.caaIdentities) ? (s.caaIdentities as string[]) : undefined,
    externalAccountRequired: s.externalAccountRequired === true,
    /** Other certificate profiles an order of this directory may ask for (ACME profiles: the order's `profile`). */
    profiles: Array.isArray(s.profiles) ? (s.profiles as unknown[]).filter((p): p is string => typeof p === 'string') : [],
  };
};

export class AcmeServer {
  constructor(private readonly deps: AcmeDeps) {}

  // ------------------------------------------------------------------ URLs

  urls(call: Pick<Call, 'base' | 'profile'>) {
    const p = encodeURIComponent(call.profile.name);
    const b = call.base;
    return {
      directory: `${b}/acme/${p}/directory`,
      newNonce: `${b}/acme/${p}/new-nonce`,
      newAccount: `${b}/acme/${p}/new-acct`,
      newOrder: `${b}/acme/${p}/new-order`,
      revokeCert: `${b}/acme/${p}/revoke-cert`,
      keyChange: `${b}/acme/${p}/key-change`,
      renewalInfo: `${b}/acme/${p}/renewal-info`,
      account: (id: string) => `${b}/acme/acct/${p}/${id}`,
      orders: (id: string) => `${b}/acme/acct/${p}/${id}/orders`,
      order: (id: string) => `${b}/acme/order/${p}/${id}`,
      finalize: (accountId: string, orderId: string) => `${b}/acme/acct/${p}/${accountId}/order/${orderId}/finalize`,
      authz: (id: string) => `${b}/acme/authz/${p}/${id}`,
      challenge: (id: string, type: string) => `${b}/acme/authz/${p}/${id}/${type}`,
      certificate: (orderId: string) => `${b}/acme/cert/${p}/${orderId}`,
    };
  }

  async directory(call: Call): Promise<Record<string, unknown>> {
    const u = this.urls(call);
    const s = settingsOf(call.profile);
    const meta: Record<string, unknown> = { externalAccountRequired: s.externalAccountRequired };
    if (s.termsOfService) meta.termsOfService = s.termsOfService;
    if (s.website) meta.website = s.website;
    if (s.caaIdentities) meta.caaIdentities = s.caaIdentities;
    // ACME profiles: this directory's certificate profile and the others its orders may ask for (ACME on).
    const profiles: Record<string, string> = { [call.profile.name]: call.profile.description ?? call.profile.name };
    for (const name of s.profiles) {
      const other = await this.deps.enrollment.profile('acme', name);
      if (other) profiles[other.name] = other.description ?? other.name;
    }
    meta.profiles = profiles;
    return { newNonce: u.newNonce, newAccount: u.newAccount, newOrder: u.newOrder, revokeCert: u.revokeCert, keyChange: u.keyChange, renewalInfo: u.renewalInfo, meta };
  }

  /** RFC 9773: the suggested renewal window of a certificate this directory issued. */
  async renewalInfo(call: Call, certId: string): Promise<Record<string, unknown>> {
    const { akiHex, serialHex } = parseCertId(certId);
    const order = await this.deps.store.orderByCertId('default', akiHex, serialHex);
    if (!order || order.profile !== call.profile.name || order.notBeforeMs == null || order.notAfterMs == null) throw new AcmeProblem('malformed', 'No certificate of this directory has that identifier', { status: 404 });
    const w = suggestedWindow(order.notBeforeMs, order.notAfterMs, order.renewAfter ?? null);
    return { suggestedWindow: { start: iso(w.start), end: iso(w.end) } };
  }

  // ------------------------------------------------------------------ request authentication

  /** Parses and verifies a JWS request: nonce spent, url matched, key from jwk (`expectJwk`) or the account (kid). */
  async authenticate(call: Call, body: unknown, expect: 'jwk' | 'kid' | 'either'): Promise<VerifiedJws & { account: Account | null }> {
    const jws = parseJws(body);
    const header = headerOf(jws);
    if (!(await this.deps.nonces.consume(header.nonce))) throw new AcmeProblem('badNonce', 'The nonce is unknown, used or expired');
    if (header.url !== call.url) throw new AcmeProblem('unauthorized', `The JWS url ${JSON.stringify(header.url)} is not this request's URL ${call.url}`);
    if (expect === 'jwk' && !header.jwk) throw new AcmeProblem('malformed', 'This request is signed with a jwk, not a kid');
    if (expect === 'kid' && !header.kid) throw new AcmeProblem('malformed', 'This request is signed with a kid (the account URL), not a jwk');
    if (header.jwk) return { ...(await verifyWith(jws, header, publicJwk(header.jwk))), account: null };
    const prefix = this.urls(call).account('');
    if (!header.kid!.startsWith(prefix)) throw new AcmeProblem('accountDoesNotExist', 'The kid is not an account of this directory');
    const account = await this.deps.store.account('default', call.profile.name, header.kid!.slice(prefix.length));
    if (!account) throw new AcmeProblem('accountDoesNotExist', 'No such account');
    // The stored account key: an algorithm it cannot verify means the request is signed by another key.
    const verified = await verifyWith(jws, header, account.jwk).catch((err: unknown) => {
      throw err instanceof AcmeProblem && err.type === 'badPublicKey' ? new AcmeProblem('malformed', 'The JWS signature does not verify with the account key') : err;
    });
    if (account.status !== 'valid') throw new AcmeProblem('unauthorized', `The account is ${account.status}`);
    return { ...verified, account };
  }

  // ------------------------------------------------------------------ accounts

  accountView(account: Account, call: Call): Record<string, unknown> {
    return { status: account.status, contact: account.contact, termsOfServiceAgreed: account.termsAgreed, orders: this.urls(call).orders(account.id), createdAt: iso(account.createdAt) };
  }

  private checkContacts(contact: unknown): string[] {
    if (contact === undefined) return [];
    if (!Array.isArray(contact) || contact.length > 8) throw new AcmeProblem('invalidContact', 'contact must be a list of at most 8 mailto: URLs');
    return contact.map((c) => {
      if (typeof c !== 'string') throw new AcmeProblem('invalidContact', 'A contact is not a string');
      if (!c.startsWith('mailto:')) throw new AcmeProblem('unsupportedContact', `Only mailto: contacts are supported (${c.slice(0, 64)})`);
      const address = c.slice(7);
      if (address.includes(',') || address.includes('?') || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(address)) throw new AcmeProblem('invalidContact', `${c.slice(0, 100)} is not one email address`);
      return c;
    });
  }

  async newAccount(call: Call, body: unknown): Promise<{ status: number; body: unknown; location: string }> {
    const { payload, jwk } = await this.authenticate(call, body, 'jwk');
    const p = payload ?? {};
    const thumbprint = await thumbprintOf(jwk);
    const existing = await this.deps.store.accountByKey('default', call.profile.name, thumbprint);
    if (existing) return { status: 200, body: this.accountView(existing, call), location: this.urls(call).account(existing.id) };
    if (p.onlyReturnExisting === true) throw new AcmeProblem('accountDoesNotExist', 'No account has this key');
    const s = settingsOf(call.profile);
    if (s.termsOfService && p.termsOfServiceAgreed !== true) throw new AcmeProblem('userActionRequired', `The terms of service (${s.termsOfService}) must be agreed`);
    if (s.externalAccountRequired && !p.externalAccountBinding) throw new AcmeProblem('externalAccountRequired', 'This directory requires an external account binding');
    const contact = this.checkContacts(p.contact);
    const eab = p.externalAccountBinding === undefined ? null : await verifyEab(p.externalAccountBinding, jwk, this.urls(call).newAccount, call.profile.name, this.deps.configObjects, this.deps.now());
    const account = { id: newId(), tenant: 'default', profile: call.profile.name, thumbprint, jwk: publicJwk(jwk), status: 'valid' as const, contact, termsAgreed: p.termsOfServiceAgreed === true, eabKid: eab?.kid ?? null };
    try {
      await this.deps.store.insertAccount(account);
    } catch (err) {
      // The same key registered concurrently: answer that account.
      const raced = await this.deps.store.accountByKey('default', call.profile.name, thumbprint);
      if (!raced) throw err;
      return { status: 200, body: this.accountView(raced, call), location: this.urls(call).account(raced.id) };
    }
    return { status: 201, body: this.accountView({ ...account, createdAt: this.deps.now() }, call), location: this.urls(call).account(account.id) };
  }

  async updateAccount(call: Call, accountId: string, body: unknown): Promise<unknown> {
    const { payload, account } = await this.authenticate(call, body, 'kid');
    if (account!.id !== accountId) throw new AcmeProblem('unauthorized', 'The kid is another account');
    if (payload === null) return this.accountView(account!, call);
    const patch: { contact?: string[]; status?: Account['status'] } = {};
    if (payload.contact !== undefined) patch.contact = this.checkContacts(payload.contact);
    if (payload.status !== undefined) {
      if (payload.status !== 'deactivated') throw new AcmeProblem('malformed', 'An account status may only be set to deactivated');
      patch.status = 'deactivated';
    }
    await this.deps.store.updateAccount(account!.id, patch);
    return this.accountView({ ...account!, ...patch }, call);
  }

  async keyChange(call: Call, body: unknown): Promise<unknown> {
    const { payload, account } = await this.authenticate(call, body, 'kid');
    if (!payload) throw new AcmeProblem('malformed', 'key-change needs the inner JWS');
    const inner = parseJws(payload);
    const header = headerOf(inner);
    if (!header.jwk) throw new AcmeProblem('malformed', 'The inner JWS is signed with the new key (jwk)');
    if (header.url !== call.url) throw new AcmeProblem('malformed', 'The inner JWS url is not the key-change URL');
    const { payload: change, jwk } = await verifyWith(inner, header, publicJwk(header.jwk));
    const u = this.urls(call);
    if (!change || change.account !== u.account(account!.id)) throw new AcmeProblem('malformed', 'The inner payload names another account');
    const oldThumbprint = await thumbprintOf(publicJwk((change.oldKey ?? {}) as JWK)).catch(() => null);
    if (oldThumbprint !== account!.thumbprint) throw new AcmeProblem('malformed', 'oldKey is not the account key');
    const thumbprint = await thumbprintOf(jwk);
    const holder = await this.deps.store.accountByKey('default', call.profile.name, thumbprint);
    if (holder) throw new AcmeProblem('malformed', 'The new key is already an account key', { status: 409, headers: { location: u.account(holder.id) } });
    await this.deps.store.updateAccount(account!.id, { jwk: publicJwk(jwk), thumbprint });
    return this.accountView(account!, call);
  }

  async ordersOf(call: Call, accountId: string, body: unknown): Promise<unknown> {
    const { account } = await this.authenticate(call, body, 'kid');
    if (account!.id !== accountId) throw new AcmeProblem('unauthorized', 'The kid is another account');
    const ids = await this.deps.store.orderIdsOf(account!.id, 1000);
    return { orders: ids.map((id) => this.urls(call).order(id)) };
  }

  // ------------------------------------------------------------------ orders

  private identifiersOf(raw: unknown, types: string[]): Identifier[] {
    if (!Array.isArray(raw) || raw.length === 0 || raw.length > 100) throw new AcmeProblem('malformed', 'identifiers must list 1 to 100 identifiers');
    const seen = new Set<string>();
    const out: Identifier[] = [];
    const subproblems: NonNullable<ConstructorParameters<typeof AcmeProblem>[2]>['subproblems'] = [];
    for (const entry of raw) {
      const e = entry as { type?: unknown; value?: unknown };
      if (typeof e !== 'object' || e === null || typeof e.type !== 'string' || typeof e.value !== 'string') throw new AcmeProblem('malformed', 'An identifier needs type and value strings');
      if (e.type === 'dns') {
        const value = e.value.toLowerCase();
        const name = value.startsWith('*.') ? value.slice(2) : value;
        const fqdn = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name) && !isIP(name);
        if (!fqdn) subproblems.push({ ...problemOf('rejectedIdentifier', `${e.value.slice(0, 255)} is not a DNS name`), identifier: { type: 'dns', value: e.value.slice(0, 255) } });
        else if (value.startsWith('*.') && !types.includes('dns-01')) subproblems.push({ ...problemOf('rejectedIdentifier', `${value}: wildcards need dns-01, which this profile does not offer`), identifier: { type: 'dns', value } });
        else if (!seen.has(`dns:${value}`)) {
          seen.add(`dns:${value}`);
          out.push({ type: 'dns', value });
        }
      } else if (e.type === 'ip') {
        if (!isIP(e.value)) subproblems.push({ ...problemOf('rejectedIdentifier', `${e.value.slice(0, 64)} is not an IP address`), identifier: { type: 'ip', value: e.value.slice(0, 64) } });
        else if (!seen.has(`ip:${e.value}`)) {
          seen.add(`ip:${e.value}`);
          out.push({ type: 'ip', value: e.value });
        }
      } else throw new AcmeProblem('unsupportedIdentifier', `Identifier type ${e.type.slice(0, 32)} is not supported (dns, ip)`);
    }
    if (subproblems.length === 1) throw new AcmeProblem('rejectedIdentifier', subproblems[0]!.detail, { subproblems });
    if (subproblems.length) throw new AcmeProblem('compound', `${subproblems.length} identifiers are refused`, { status: 400, subproblems });
    return out;
  }

  async newOrder(call: Call, body: unknown): Promise<{ body: unknown; location: string }> {
    const { payload, account } = await this.authenticate(call, body, 'kid');
    const p = payload ?? {};
    const s = settingsOf(call.profile);
    const policy = await this.policyOf(account!);
    const offered = policy?.challengeTypes?.length ? s.challengeTypes.filter((t) => policy.challengeTypes!.includes(t)) : s.challengeTypes;
    if (offered.length === 0) throw new AcmeProblem('unauthorized', "The account's EAB policy allows none of this profile's validation methods");
    const identifiers = this.identifiersOf(p.identifiers, offered);
    if (policy) {
      const refused = identifiers.filter((i) => !identifierAllowed(policy, i.value));
      if (refused.length) throw new AcmeProblem('rejectedIdentifier', `The account's EAB policy ${policy.name} does not allow ${refused.map((i) => i.value).join(', ')}`);
    }
    for (const field of ['notBefore', 'notAfter'] as const) {
      if (p[field] !== undefined && (typeof p[field] !== 'string' || Number.isNaN(Date.parse(p[field] as string)))) throw new AcmeProblem('malformed', `${field} is not an RFC 3339 date`);
    }
    if (p.notBefore !== undefined || p.notAfter !== undefined) throw new AcmeProblem('malformed', 'notBefore and notAfter are set by the profile; leave them out');
    const issuanceProfile = await this.issuanceProfileOf(call, p.profile);
    const replaces = p.replaces === undefined ? null : await this.replaceable(account!, p.replaces);
    const now = this.deps.now();
    const expiresAt = now + this.deps.orderLifetimeMs;
    const orderId = newId();
    const authorizations: Authorization[] = identifiers.map((identifier) => {
      const wildcard = identifier.type === 'dns' && identifier.value.startsWith('*.');
      const types = offered.filter((t) => (wildcard ? t === 'dns-01' : identifier.type === 'ip' ? t !== 'dns-01' : true));
      return {
        id: newId(),
        tenant: 'default',
        profile: call.profile.name,
        accountId: account!.id,
        orderId,
        identifier: wildcard ? { type: 'dns', value: identifier.value.slice(2) } : identifier,
        wildcard,
        status: 'pending',
        expiresAt,
        challenges: types.map((type) => ({ type, token: newToken(), status: 'pending' })),
      };
    });
    const order: Omit<Order, 'createdAt'> = {
      id: orderId,
      tenant: 'default',
      profile: call.profile.name,
      accountId: account!.id,
      status: 'pending',
      expiresAt,
      identifiers,
      authorizations: authorizations.map((z) => z.id),
      notBefore: null,
      notAfter: null,
      error: null,
      requestId: null,
      certificatePem: null,
      replaces,
      issuanceProfile,
    };
    await this.deps.store.insertOrder(order, authorizations);
    return { body: this.orderView({ ...order, createdAt: now }, call), location: this.urls(call).order(orderId) };
  }

  /** ACME profiles: the certificate profile an order asks for, when another than the directory's. */
  private async issuanceProfileOf(call: Call, requested: unknown): Promise<string | null> {
    if (requested === undefined || requested === call.profile.name) return null;
    if (typeof requested !== 'string') throw new AcmeProblem('malformed', 'profile is a profile name');
    const allowed = settingsOf(call.profile).profiles.includes(requested) && (await this.deps.enrollment.profile('acme', requested)) !== null;
    if (!allowed) throw new AcmeProblem('invalidProfile', `Profile ${requested.slice(0, 191)} is not offered by this directory`);
    return requested;
  }

  /** RFC 9773 §5: `replaces` names a certificate the account holds and no other order replaces yet. */
  private async replaceable(account: Account, certId: unknown): Promise<string> {
    const { akiHex, serialHex } = parseCertId(certId);
    const replaced = await this.deps.store.orderByCertId('default', akiHex, serialHex);
    if (!replaced || replaced.accountId !== account.id) throw new AcmeProblem('malformed', 'replaces names no certificate of this account');
    if (await this.deps.store.replacing('default', certId as string)) throw new AcmeProblem('alreadyReplaced', 'Another order already replaces this certificate');
    return certId as string;
  }

  /** The EAB policy of an account bound with an EAB key (read at each order: a policy change applies at once). */
  private async policyOf(account: Account): Promise<EabPolicy | null> {
    if (!account.eabKid) return null;
    const key = (await this.deps.configObjects.get('acme-eab-key', account.eabKid)) as { policy?: string } | null;
    if (!key?.policy) throw new AcmeProblem('unauthorized', 'The EAB key that bound this account was removed');
    const policy = (await this.deps.configObjects.get(EAB_POLICY, key.policy)) as EabPolicy | null;
    if (!policy) throw new AcmeProblem('unauthorized', 'The EAB policy of this account was removed');
    return policy;
  }

  orderView(order: Order, call: Call): Record<string, unknown> {
    const u = this.urls(call);
    const out: Record<string, unknown> = {
      status: order.status,
      expires: iso(order.expiresAt),
      identifiers: order.identifiers,
      authorizations: order.authorizations.map((id) => u.authz(id)),
      finalize: u.finalize(order.accountId, order.id),
    };
    if (order.notBefore) out.notBefore = order.notBefore;
    if (order.notAfter) out.notAfter = order.notAfter;
    if (order.error) out.error = order.error;
    if (order.replaces) out.replaces = order.replaces;
    if (order.issuanceProfile) out.profile = order.issuanceProfile;
    if (order.status === 'valid') out.certificate = u.certificate(order.id);
    return out;
  }

  /** The order as it stands now: expired when its time is up, issued once its pending request completed. */
  async currentOrder(call: Call, id: string): Promise<Order> {
    let order = await this.deps.store.order('default', call.profile.name, id);
    if (!order) throw new AcmeProblem('malformed', 'No such order', { status: 404 });
    if ((order.status === 'pending' || order.status === 'ready') && order.expiresAt <= this.deps.now()) {
      await this.deps.store.moveOrder(order.id, [order.status], 'invalid', { error: problemOf('malformed', 'The order expired') });
      order = (await this.deps.store.order('default', call.profile.name, id))!;
    }
    if (order.status === 'processing' && order.requestId) {
      const state = await this.deps.enrollment.request(order.requestId);
      if (state) await this.settleIssuance(order, state);
      order = (await this.deps.store.order('default', call.profile.name, id))!;
    }
    return order;
  }

  async getOrder(call: Call, id: string, body: unknown | undefined): Promise<Order> {
    if (body !== undefined) {
      const { account } = await this.authenticate(call, body, 'kid');
      const order = await this.currentOrder(call, id);
      if (order.accountId !== account!.id) throw new AcmeProblem('unauthorized', 'The order belongs to another account');
      return order;
    }
    return this.currentOrder(call, id);
  }

  private async settleIssuance(order: Order, state: Awaited<ReturnType<EnrollmentFacade['request']>> & object): Promise<void> {
    if (state.status === 'completed' && state.certificatePem) {
      const pem = [state.certificatePem.trim(), ...(state.chainPem ?? []).map((c) => c.trim())].join('\n') + '\n';
      await this.deps.store.moveOrder(order.id, ['processing'], 'valid', { certificatePem: pem, certificateThumbprint: thumbprintOfPem(state.certificatePem), certificate: certFactsOf(state.certificatePem) });
    } else if (['failed', 'denied', 'canceled'].includes(state.status)) {
      await this.deps.store.moveOrder(order.id, ['processing'], 'invalid', { error: problemOf('badCSR', state.error ? `The issuance ${state.status}: ${state.error}` : `The issuance was ${state.status}`) });
    }
  }

  async finalize(call: Call, accountId: string, orderId: string, body: unknown): Promise<Order> {
    const { payload, account } = await this.authenticate(call, body, 'kid');
    if (account!.id !== accountId) throw new AcmeProblem('unauthorized', 'The kid is another account');
    const order = await this.currentOrder(call, orderId);
    if (order.accountId !== account!.id) throw new AcmeProblem('unauthorized', 'The order belongs to another account');
    if (order.status !== 'ready') throw new AcmeProblem('orderNotReady', `The order is ${order.status}`);
    const csr = await csrNames(payload?.csr);
    const asked = new Set(order.identifiers.map((i) => `${i.type}:${i.value}`));
    const named = new Set(csr.identifiers.map((i) => `${i.type}:${i.value}`));
    if (csr.commonName && !asked.has(`dns:${csr.commonName.toLowerCase()}`) && !asked.has(`ip:${csr.commonName}`)) throw new AcmeProblem('badCSR', `The CSR's common name ${csr.commonName} is not an identifier of the order`);
    if (asked.size !== named.size || [...asked].some((i) => !named.has(i))) {
      throw new AcmeProblem('badCSR', `The CSR names ${[...named].join(', ') || 'nothing'}; the order's identifiers are ${[...asked].join(', ')}`);
    }
    if (!(await this.deps.store.moveOrder(order.id, ['ready'], 'processing'))) throw new AcmeProblem('orderNotReady', 'The order is being finalized');
    const dns = order.identifiers.filter((i) => i.type === 'dns').map((i) => i.value);
    const ips = order.identifiers.filter((i) => i.type === 'ip').map((i) => i.value);
    const cn = csr.commonName ?? dns.find((d) => d.length <= 64) ?? ips[0] ?? null;
    const outcome = await this.deps.enrollment.enroll({
      protocol: 'acme',
      profile: order.issuanceProfile ?? call.profile.name,
      csrPem: csr.pem,
      requester: `acme:${account!.id}`,
      ...(cn ? { subject: [{ element: 'cn.1', value: cn }] } : {}),
      sans: [...(dns.length ? [{ type: 'DNSNAME' as const, value: dns }] : []), ...(ips.length ? [{ type: 'IPADDRESS' as const, value: ips }] : [])],
    });
    if ('refused' in outcome) {
      const error = problemOf('badCSR', `${outcome.message} (${outcome.code})`);
      await this.deps.store.moveOrder(order.id, ['processing'], 'invalid', { error });
      throw new AcmeProblem('badCSR', error.detail);
    }
    await this.deps.store.moveOrder(order.id, ['processing'], 'processing', { requestId: outcome.requestId });
    await this.settleIssuance({ ...order, status: 'processing' }, outcome);
    return (await this.deps.store.order('default', call.profile.name, order.id))!;
  }

  async certificate(call: Call, orderId: string, body: unknown | undefined): Promise<string> {
    const order = await this.getOrder(call, orderId, body);
    if (order.status !== 'valid' || !order.certificatePem) throw new AcmeProblem('malformed', 'The order has no certificate', { status: 404 });
    return order.certificatePem;
  }

  // ------------------------------------------------------------------ authorizations and challenges

  authorizationView(z: Authorization, call: Call): Record<string, unknown> {
    const status = z.status === 'pending' && z.expiresAt <= this.deps.now() ? 'expired' : z.status;
    return {
      identifier: z.identifier,
      status,
      expires: iso(z.expiresAt),
      challenges: z.challenges.map((c) => this.challengeView(z, c, call)),
      ...(z.wildcard ? { wildcard: true } : {}),
    };
  }

  challengeView(z: Authorization, c: Challenge, call: Call): Record<string, unknown> {
    return {
      type: c.type,
      url: this.urls(call).challenge(z.id, c.type),
      status: c.status,
      token: c.token,
      ...(c.validated ? { validated: iso(c.validated) } : {}),
      ...(c.error ? { error: c.error } : {}),
    };
  }

  async getAuthorization(call: Call, id: string, body: unknown | undefined): Promise<Authorization> {
    let account: Account | null = null;
    let payload: Record<string, unknown> | null = null;
    if (body !== undefined) ({ account, payload } = await this.authenticate(call, body, 'kid'));
    const z = await this.deps.store.authorization('default', call.profile.name, id);
    if (!z) throw new AcmeProblem('malformed', 'No such authorization', { status: 404 });
    if (account && z.accountId !== account.id) throw new AcmeProblem('unauthorized', 'The authorization belongs to another account');
    if (payload && payload.status === 'deactivated') {
      if (!(await this.deps.store.moveAuthorization(z.id, z.status === 'valid' ? 'valid' : 'pending', 'deactivated', z.challenges))) throw new AcmeProblem('malformed', `The authorization is ${z.status}`);
      await this.deps.store.settleOrder(z.orderId);
      return (await this.deps.store.authorizationById(z.id))!;
    }
    return z;
  }

  async respondChallenge(call: Call, id: string, type: string, body: unknown | undefined): Promise<{ authorization: Authorization; challenge: Challenge }> {
    let account: Account | null = null;
    let payload: Record<string, unknown> | null = null;
    if (body !== undefined) ({ account, payload } = await this.authenticate(call, body, 'kid'));
    const z = await this.deps.store.authorization('default', call.profile.name, id);
    const challenge = z?.challenges.find((c) => c.type === type);
    if (!z || !challenge) throw new AcmeProblem('malformed', 'No such challenge', { status: 404 });
    if (account && z.accountId !== account.id) throw new AcmeProblem('unauthorized', 'The challenge belongs to another account');
    // A POST with a payload (`{}`) asks for validation; POST-as-GET (empty payload) and GET only read.
    if (payload === null || challenge.status !== 'pending' || z.status !== 'pending') return { authorization: z, challenge };
    if (z.expiresAt <= this.deps.now()) throw new AcmeProblem('malformed', 'The authorization expired');
    if (this.deps.skipValidation) {
      const valid = z.challenges.map((c) => (c.type === type ? { ...c, status: 'valid' as const, validated: this.deps.now() } : c));
      if (await this.deps.store.moveAuthorization(z.id, 'pending', 'valid', valid)) await this.deps.store.settleOrder(z.orderId);
      return { authorization: { ...z, status: 'valid', challenges: valid }, challenge: valid.find((c) => c.type === type)! };
    }
    const challenges = z.challenges.map((c) => (c.type === type ? { ...c, status: 'processing' as const } : c));
    if (await this.deps.store.moveAuthorization(z.id, 'pending', 'pending', challenges)) {
      await this.deps.jobs.now(VALIDATE_JOB, { authorization: z.id, type });
    }
    return { authorization: { ...z, challenges }, challenge: challenges.find((c) => c.type === type)! };
  }

  // ------------------------------------------------------------------ revocation

  async revoke(call: Call, body: unknown): Promise<void> {
    const { payload, account, jwk } = await this.authenticate(call, body, 'either');
    if (!payload || typeof payload.certificate !== 'string' || !/^[A-Za-z0-9_-]+$/.test(payload.certificate)) throw new AcmeProblem('malformed', 'The payload needs certificate, base64url DER');
    const reasonCode = payload.reason === undefined ? 0 : payload.reason;
    const reason = typeof reasonCode === 'number' ? REVOCATION_REASONS[reasonCode] : undefined;
    if (!reason) throw new AcmeProblem('badRevocationReason', `Reason ${JSON.stringify(reasonCode)} is not allowed (0, 1, 3, 4, 5, 9, 10)`);
    const der = Buffer.from(payload.certificate, 'base64url');
    const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
    const known = await this.deps.enrollment.certificate(pem);
    const served = [call.profile.name, ...settingsOf(call.profile).profiles];
    if (!known || !known.profile || !served.includes(known.profile)) throw new AcmeProblem('malformed', 'The certificate was not issued through this directory', { status: 404 });
    if (known.revoked) throw new AcmeProblem('alreadyRevoked', 'The certificate is already revoked');
    if (account) {
      const order = await this.deps.store.orderByCertificate('default', thumbprintOfPem(pem));
      if (!order || order.accountId !== account.id) throw new AcmeProblem('unauthorized', 'The account did not order this certificate');
    } else if (!keyMatchesCertificate(jwk, der)) throw new AcmeProblem('unauthorized', "The JWS is signed neither by the account nor by the certificate's key");
    const outcome = await this.deps.enrollment.revoke({ protocol: 'acme', certificatePem: pem, requester: account ? `acme:${account.id}` : 'acme:certificate-key', reason });
    if ('refused' in outcome) {
      if (outcome.code === 'WEBRA-REVOKE-005') throw new AcmeProblem('alreadyRevoked', 'The certificate is already revoked');
      throw new AcmeProblem('unauthorized', `${outcome.message} (${outcome.code})`);
    }
    if (outcome.status === 'failed') throw new AcmeProblem('serverInternal', outcome.error ?? 'The revocation failed');
  }
}

/** SHA-1 of the DER, as the inventory's thumbprint. */
export function thumbprintOfPem(pem: string): string {
  const b64 = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return createHash('sha1').update(Buffer.from(b64, 'base64')).digest('hex');
}

function keyMatchesCertificate(jwk: JWK, der: Buffer): boolean {
  try {
    const certKey = new X509Certificate(der).publicKey.export({ type: 'spki', format: 'der' });
    const jwsKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'der' });
    return Buffer.from(certKey).equals(Buffer.from(jwsKey));
  } catch {
    return false;
  }
}
