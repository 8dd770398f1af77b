import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/** An imported CA as stored (pki_cas). */
export interface CaRecord {
  id: string;
  tenant: string;
  name: string;
  /** PEM. */
  certificate: string;
  subjectDn: string;
  issuerDn: string;
  ski: string | null;
  aki: string | null;
  serial: string;
  thumbprintSha1: string;
  thumbprintSha256: string;
  publicKeyThumbprint: string;
  notBefore: number;
  notAfter: number;
  selfSigned: boolean;
  trusted: boolean;
  trustedForClientAuth: boolean;
  crlUrl: string | null;
  ocspUrl: string | null;
  outdatedRevocationStatusPolicy: string;
  public: boolean;
  downloadable: boolean;
  refresh: string | null;
  timeout: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What a write sets: everything but the id, tenant and time stamps. */
export type CaFields = Omit<CaRecord, 'id' | 'tenant' | 'createdAt' | 'updatedAt'>;

interface Row {
  id: string;
  tenant: string;
  name: string;
  certificate: string;
  subject_dn: string;
  issuer_dn: string;
  ski: string | null;
  aki: string | null;
  serial: string;
  thumbprint_sha1: string;
  thumbprint_sha256: string;
  public_key_thumbprint: string;
  not_before: number | string;
  not_after: number | string;
  self_signed: number | boolean;
  trusted: number | boolean;
  trusted_for_client_auth: number | boolean;
  crl_url: string | null;
  ocsp_url: string | null;
  outdated_revocation_status_policy: string;
  public: number | boolean;
  downloadable: number | boolean;
  refresh: string | null;
  timeout: string | null;
  created_at: number | string;
  updated_at: number | string;
}

/**
 * The index key of a DN: RFC 5280 compares names case-insensitively after whitespace folding, and a DN
 * can be longer than MySQL indexes, so rows carry the sha256 of the folded RFC 4514 string.
 */
export function nameKey(dn: string): string {
  return createHash('sha256').update(dn.trim().replace(/\s+/g, ' ').toLowerCase()).digest('hex');
}

const fromRow = (r: Row): CaRecord => ({
  id: r.id,
  tenant: r.tenant,
  name: r.name,
  certificate: r.certificate,
  subjectDn: r.subject_dn,
  issuerDn: r.issuer_dn,
  ski: r.ski,
  aki: r.aki,
  serial: r.serial,
  thumbprintSha1: r.thumbprint_sha1,
  thumbprintSha256: r.thumbprint_sha256,
  publicKeyThumbprint: r.public_key_thumbprint,
  notBefore: Number(r.not_before),
  notAfter: Number(r.not_after),
  selfSigned: Boolean(r.self_signed),
  trusted: Boolean(r.trusted),
  trustedForClientAuth: Boolean(r.trusted_for_client_auth),
  crlUrl: r.crl_url,
  ocspUrl: r.ocsp_url,
  outdatedRevocationStatusPolicy: r.outdated_revocation_status_policy,
  public: Boolean(r.public),
  downloadable: Boolean(r.downloadable),
  refresh: r.refresh,
  timeout: r.timeout,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toColumns = (f: CaFields) => ({
  name: f.name,
  certificate: f.certificate,
  subject_dn: f.subjectDn,
  subject_key: nameKey(f.subjectDn),
  issuer_dn: f.issuerDn,
  issuer_key: nameKey(f.issuerDn),
  ski: f.ski,
  aki: f.aki,
  serial: f.serial,
  thumbprint_sha1: f.thumbprintSha1,
  thumbprint_sha256: f.thumbprintSha256,
  public_key_thumbprint: f.publicKeyThumbprint,
  not_before: f.notBefore,
  not_after: f.notAfter,
  self_signed: f.selfSigned,
  trusted: f.trusted,
  trusted_for_client_auth: f.trustedForClientAuth,
  crl_url: f.crlUrl,
  ocsp_url: f.ocspUrl,
  outdated_revocation_status_policy: f.outdatedRevocationStatusPolicy,
  public: f.public,
  downloadable: f.downloadable,
  refresh: f.refresh,
  timeout: f.timeout,
});

/** Rows of pki_cas, always within one tenant. */
export class CaStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  /** The same rows through another handle (a configuration import's transaction). */
  on(db: Knex | Knex.Transaction): CaStore {
    return new CaStore(db as Knex, this.clock);
  }

  async list(tenant: string): Promise<CaRecord[]> {
    return ((await this.knex('pki_cas').where({ tenant }).orderBy('name')) as Row[]).map(fromRow);
  }

  async byName(tenant: string, name: string): Promise<CaRecord | undefined> {
    const row = (await this.knex('pki_cas').where({ tenant, name }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  async byId(tenant: string, id: string): Promise<CaRecord | undefined> {
    const row = (await this.knex('pki_cas').where({ tenant, id }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  async byThumbprint(tenant: string, sha256: string): Promise<CaRecord | undefined> {
    const row = (await this.knex('pki_cas').where({ tenant, thumbprint_sha256: sha256 }).first()) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** CAs whose subject is this DN: the issuer candidates of a certificate naming it as its issuer. */
  async bySubject(tenant: string, dn: string): Promise<CaRecord[]> {
    return ((await this.knex('pki_cas').where({ tenant, subject_key: nameKey(dn) })) as Row[]).map(fromRow);
  }

  /** CAs whose issuer is this DN (the certificates a CA may have issued). */
  async byIssuer(tenant: string, dn: string): Promise<CaRecord[]> {
    return ((await this.knex('pki_cas').where({ tenant, issuer_key: nameKey(dn) })) as Row[]).map(fromRow);
  }

  async insert(tenant: string, id: string, fields: CaFields): Promise<CaRecord> {
    const now = this.clock();
    await this.knex('pki_cas').insert({ id, tenant, ...toColumns(fields), created_at: now, updated_at: now });
    return (await this.byId(tenant, id))!;
  }

  async update(tenant: string, id: string, fields: CaFields): Promise<CaRecord> {
    await this.knex('pki_cas')
      .where({ tenant, id })
      .update({ ...toColumns(fields), updated_at: this.clock() });
    return (await this.byId(tenant, id))!;
  }

  async remove(tenant: string, id: string): Promise<void> {
    await this.knex('pki_cas').where({ tenant, id }).delete();
  }
}
