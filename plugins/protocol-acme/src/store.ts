/** The ACME tables (migrations/0001_acme.ts), row ↔ object. Every query is bound. */
import type { JWK } from 'jose';
import type { PluginDatabase } from '@certwright/sdk';
import type { ProblemDocument } from './problems.js';

export interface Identifier {
  type: 'dns' | 'ip';
  value: string;
}

export interface Account {
  id: string;
  tenant: string;
  profile: string;
  thumbprint: string;
  jwk: JWK;
  status: 'valid' | 'deactivated' | 'revoked';
  contact: string[];
  termsAgreed: boolean;
  eabKid: string | null;
  createdAt: number;
}

export interface Challenge {
  type: string;
  token: string;
  status: 'pending' | 'processing' | 'valid' | 'invalid';
  validated?: number;
  error?: ProblemDocument;
}

export interface Authorization {
  id: string;
  tenant: string;
  profile: string;
  accountId: string;
  orderId: string;
  identifier: Identifier;
  wildcard: boolean;
  status: 'pending' | 'valid' | 'invalid' | 'deactivated' | 'expired' | 'revoked';
  expiresAt: number;
  challenges: Challenge[];
}

export interface Order {
  id: string;
  tenant: string;
  profile: string;
  accountId: string;
  status: 'pending' | 'ready' | 'processing' | 'valid' | 'invalid';
  expiresAt: number;
  identifiers: Identifier[];
  authorizations: string[];
  notBefore: string | null;
  notAfter: string | null;
  error: ProblemDocument | null;
  requestId: string | null;
  certificatePem: string | null;
  replaces: string | null;
  /** The certificate profile the order asked for (ACME profiles); null: the directory's own. */
  issuanceProfile: string | null;
  /** ARI: the issued certificate's serial and AKI (hex), its validity, and an administrator's early-renewal date. */
  certificateSerial?: string | null;
  certificateAki?: string | null;
  notBeforeMs?: number | null;
  notAfterMs?: number | null;
  renewAfter?: number | null;
  createdAt: number;
}

type Row = Record<string, unknown>;

/** A LIKE pattern for "contains `text`", its wildcards escaped with `!` (the same on SQLite and MySQL). */
const contains = (text: string): string => `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
const json = <T>(v: unknown, fallback: T): T => (typeof v === 'string' && v !== '' ? (JSON.parse(v) as T) : fallback);

const accountOf = (r: Row): Account => ({
  id: r.id as string,
  tenant: r.tenant as string,
  profile: r.profile as string,
  thumbprint: r.thumbprint as string,
  jwk: json<JWK>(r.jwk, {}),
  status: r.status as Account['status'],
  contact: json<string[]>(r.contact, []),
  termsAgreed: Boolean(r.terms_agreed),
  eabKid: (r.eab_kid as string | null) ?? null,
  createdAt: Number(r.created_at),
});

const orderOf = (r: Row): Order => ({
  id: r.id as string,
  tenant: r.tenant as string,
  profile: r.profile as string,
  accountId: r.account_id as string,
  status: r.status as Order['status'],
  expiresAt: Number(r.expires_at),
  identifiers: json<Identifier[]>(r.identifiers, []),
  authorizations: json<string[]>(r.authorizations, []),
  notBefore: (r.not_before as string | null) ?? null,
  notAfter: (r.not_after as string | null) ?? null,
  error: json<ProblemDocument | null>(r.error, null),
  requestId: (r.request_id as string | null) ?? null,
  certificatePem: (r.certificate_pem as string | null) ?? null,
  replaces: (r.replaces as string | null) ?? null,
  issuanceProfile: (r.issuance_profile as string | null) ?? null,
  certificateSerial: (r.certificate_serial as string | null) ?? null,
  certificateAki: (r.certificate_aki as string | null) ?? null,
  notBeforeMs: r.not_before_ms === null || r.not_before_ms === undefined ? null : Number(r.not_before_ms),
  notAfterMs: r.not_after_ms === null || r.not_after_ms === undefined ? null : Number(r.not_after_ms),
  renewAfter: r.renew_after === null || r.renew_after === undefined ? null : Number(r.renew_after),
  createdAt: Number(r.created_at),
});

const authorizationOf = (r: Row): Authorization => ({
  id: r.id as string,
  tenant: r.tenant as string,
  profile: r.profile as string,
  accountId: r.account_id as string,
  orderId: r.order_id as string,
  identifier: { type: r.identifier_type as Identifier['type'], value: r.identifier_value as string },
  wildcard: Boolean(r.wildcard),
  status: r.status as Authorization['status'],
  expiresAt: Number(r.expires_at),
  challenges: json<Challenge[]>(r.challenges, []),
});

export class AcmeStore {
  constructor(
    readonly db: PluginDatabase,
    private readonly now: () => number,
  ) {}

  // ------------------------------------------------------------------ accounts

  async accountByKey(tenant: string, profile: string, thumbprint: string): Promise<Account | null> {
    const row = (await this.db('acme_accounts').where({ tenant, profile, thumbprint }).first()) as Row | undefined;
    return row ? accountOf(row) : null;
  }

  async account(tenant: string, profile: string, id: string): Promise<Account | null> {
    const row = (await this.db('acme_accounts').where({ tenant, profile, id }).first()) as Row | undefined;
    return row ? accountOf(row) : null;
  }

  async insertAccount(a: Omit<Account, 'createdAt'>): Promise<void> {
    const at = this.now();
    await this.db('acme_accounts').insert({
      id: a.id,
      tenant: a.tenant,
      profile: a.profile,
      thumbprint: a.thumbprint,
      jwk: JSON.stringify(a.jwk),
      status: a.status,
      contact: JSON.stringify(a.contact),
      terms_agreed: a.termsAgreed,
      eab_kid: a.eabKid,
      created_at: at,
      updated_at: at,
    });
  }

  async updateAccount(id: string, patch: { contact?: string[]; status?: Account['status']; jwk?: JWK; thumbprint?: string }): Promise<void> {
    const row: Row = { updated_at: this.now() };
    if (patch.contact) row.contact = JSON.stringify(patch.contact);
    if (patch.status) row.status = patch.status;
    if (patch.jwk) row.jwk = JSON.stringify(patch.jwk);
    if (patch.thumbprint) row.thumbprint = patch.thumbprint;
    await this.db('acme_accounts').where({ id }).update(row);
  }

  /** Accounts matching the filter, newest first, one page (limit + 1 rows tell whether more follow). */
  async listAccounts(f: { profile?: string; status?: string; eabKid?: string; contact?: string }, offset: number, limit: number): Promise<Account[]> {
    const q = this.db('acme_accounts').where({ tenant: 'default' });
    if (f.profile) q.andWhere('profile', f.profile);
    if (f.status) q.andWhere('status', f.status);
    if (f.eabKid) q.andWhere('eab_kid', f.eabKid);
    if (f.contact) q.andWhereRaw("contact LIKE ? ESCAPE '!'", [contains(f.contact)]);
    return ((await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }]).offset(offset).limit(limit)) as Row[]).map(accountOf);
  }

  async accountById(id: string): Promise<Account | null> {
    const row = (await this.db('acme_accounts').where({ tenant: 'default', id }).first()) as Row | undefined;
    return row ? accountOf(row) : null;
  }

  // ------------------------------------------------------------------ orders and authorizations

  async listOrders(f: { profile?: string; account?: string; status?: string; identifier?: string }, offset: number, limit: number): Promise<(Order & { certificateThumbprint: string | null })[]> {
    const q = this.db('acme_orders').where({ tenant: 'default' });
    if (f.profile) q.andWhere('profile', f.profile);
    if (f.account) q.andWhere('account_id', f.account);
    if (f.status) q.andWhere('status', f.status);
    if (f.identifier) q.andWhereRaw("identifiers LIKE ? ESCAPE '!'", [contains(JSON.stringify(f.identifier).slice(1, -1))]);
    const rows = (await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'asc' }]).offset(offset).limit(limit)) as Row[];
    return rows.map((r) => ({ ...orderOf(r), certificateThumbprint: (r.certificate_thumbprint as string | null) ?? null }));
  }

  async orderById(id: string): Promise<Order | null> {
    const row = (await this.db('acme_orders').where({ tenant: 'default', id }).first()) as Row | undefined;
    return row ? orderOf(row) : null;
  }

  async insertOrder(order: Omit<Order, 'createdAt'>, authorizations: Authorization[]): Promise<void> {
    const at = this.now();
    await this.db.transaction(async (trx) => {
      await trx('acme_orders').insert({
        id: order.id,
        tenant: order.tenant,
        profile: order.profile,
        account_id: order.accountId,
        status: order.status,
        expires_at: order.expiresAt,
        identifiers: JSON.stringify(order.identifiers),
        authorizations: JSON.stringify(order.authorizations),
        not_before: order.notBefore,
        not_after: order.notAfter,
        error: null,
        request_id: null,
        certificate_pem: null,
        replaces: order.replaces,
        issuance_profile: order.issuanceProfile,
        created_at: at,
        updated_at: at,
      });
      if (authorizations.length === 0) return;
      await trx('acme_authorizations').insert(
        authorizations.map((z) => ({
          id: z.id,
          tenant: z.tenant,
          profile: z.profile,
          account_id: z.accountId,
          order_id: z.orderId,
          identifier_type: z.identifier.type,
          identifier_value: z.identifier.value,
          wildcard: z.wildcard,
          status: z.status,
          expires_at: z.expiresAt,
          challenges: JSON.stringify(z.challenges),
          created_at: at,
          updated_at: at,
        })),
      );
    });
  }

  async order(tenant: string, profile: string, id: string): Promise<Order | null> {
    const row = (await this.db('acme_orders').where({ tenant, profile, id }).first()) as Row | undefined;
    return row ? orderOf(row) : null;
  }

  async orderIdsOf(accountId: string, limit: number): Promise<string[]> {
    const rows = (await this.db('acme_orders').where({ account_id: accountId }).orderBy('created_at', 'desc').limit(limit).select('id')) as Row[];
    return rows.map((r) => r.id as string);
  }

  async orderByCertificate(tenant: string, thumbprint: string): Promise<Order | null> {
    const row = (await this.db('acme_orders').where({ tenant, certificate_thumbprint: thumbprint }).first()) as Row | undefined;
    return row ? orderOf(row) : null;
  }

  /**
   * Moves an order from one of `from` to `to` with the patch; false when another request moved it first
   * (the compare-and-set that makes finalize run once).
   */
  async moveOrder(
    id: string,
    from: Order['status'][],
    to: Order['status'],
    patch: { error?: unknown; requestId?: string; certificatePem?: string; certificateThumbprint?: string; certificate?: { serialHex: string; akiHex: string; notBefore: number; notAfter: number } } = {},
  ): Promise<boolean> {
    const row: Row = { status: to, updated_at: this.now() };
    if (patch.certificate) {
      row.certificate_serial = patch.certificate.serialHex;
      row.certificate_aki = patch.certificate.akiHex;
      row.not_before_ms = patch.certificate.notBefore;
      row.not_after_ms = patch.certificate.notAfter;
    }
    if (patch.error !== undefined) row.error = JSON.stringify(patch.error);
    if (patch.requestId !== undefined) row.request_id = patch.requestId;
    if (patch.certificatePem !== undefined) row.certificate_pem = patch.certificatePem;
    if (patch.certificateThumbprint !== undefined) row.certificate_thumbprint = patch.certificateThumbprint;
    return (await this.db('acme_orders').where({ id }).whereIn('status', from).update(row)) === 1;
  }

  /** The valid order that issued the certificate with this serial and AKI (an ARI certID). */
  async orderByCertId(tenant: string, akiHex: string, serialHex: string): Promise<Order | null> {
    const row = (await this.db('acme_orders').where({ tenant, certificate_serial: serialHex, certificate_aki: akiHex }).first()) as Row | undefined;
    return row ? orderOf(row) : null;
  }

  /** An order (not invalid) that already replaces the certificate `certId`. */
  async replacing(tenant: string, certId: string): Promise<string | null> {
    const row = (await this.db('acme_orders').where({ tenant, replaces: certId }).whereNot('status', 'invalid').first('id')) as Row | undefined;
    return row ? (row.id as string) : null;
  }

  /** Early renewal: the valid orders of a profile (or one order) issued before `issuedBefore` renew from `at`. */
  async advanceRenewal(tenant: string, f: { profile?: string; order?: string; issuedBefore: number }, at: number): Promise<number> {
    const q = this.db('acme_orders').where({ tenant, status: 'valid' }).andWhere('not_before_ms', '<', f.issuedBefore);
    if (f.profile) q.andWhere('profile', f.profile);
    if (f.order) q.andWhere('id', f.order);
    return q.update({ renew_after: at, updated_at: this.now() });
  }

  async authorization(tenant: string, profile: string, id: string): Promise<Authorization | null> {
    const row = (await this.db('acme_authorizations').where({ tenant, profile, id }).first()) as Row | undefined;
    return row ? authorizationOf(row) : null;
  }

  async authorizationById(id: string): Promise<Authorization | null> {
    const row = (await this.db('acme_authorizations').where({ id }).first()) as Row | undefined;
    return row ? authorizationOf(row) : null;
  }

  async authorizationsOf(orderId: string): Promise<Authorization[]> {
    return ((await this.db('acme_authorizations').where({ order_id: orderId })) as Row[]).map(authorizationOf);
  }

  /** Writes an authorization's status and challenges when it is still in `from` (compare-and-set). */
  async moveAuthorization(id: string, from: Authorization['status'], to: Authorization['status'], challenges: Challenge[]): Promise<boolean> {
    const n = await this.db('acme_authorizations').where({ id, status: from }).update({ status: to, challenges: JSON.stringify(challenges), updated_at: this.now() });
    return n === 1;
  }

  /** An order whose authorizations all turned valid becomes ready; one invalid makes it invalid. */
  async settleOrder(orderId: string): Promise<void> {
    const authorizations = await this.authorizationsOf(orderId);
    const invalid = authorizations.find((z) => z.status === 'invalid' || z.status === 'deactivated' || z.status === 'revoked');
    if (invalid) {
      const failed = invalid.challenges.find((c) => c.error)?.error;
      await this.moveOrder(orderId, ['pending'], 'invalid', { error: failed ?? { type: 'urn:ietf:params:acme:error:unauthorized', detail: `The authorization of ${invalid.identifier.value} is ${invalid.status}`, status: 403 } });
    } else if (authorizations.every((z) => z.status === 'valid')) await this.moveOrder(orderId, ['pending'], 'ready');
  }
}
