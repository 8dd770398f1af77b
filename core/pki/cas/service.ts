import type { Knex } from 'knex';
import { ProblemError } from '../../errors/index.js';
import type { EventStore } from '../../events/store.js';
import { newId } from '../../db/ids.js';
import { isUniqueViolation } from '../../db/unique.js';
import { toPem } from '../input.js';
import { readCaCertificate } from './ca-certificate.js';
import { parseDuration } from './duration.js';
import type { CaFields, CaRecord, CaStore } from './store.js';
import { view, type CaView } from './view.js';

/** What a client sends (Horizon's CertificateAuthorityRequest field names, plus `trusted`). */
export interface CaInput {
  name: string;
  certificate?: string;
  trusted?: boolean;
  trustedForServerAuthentication?: boolean;
  trustedForClientAuthentication?: boolean;
  crlUrl?: string | null;
  responderUrl?: string | null;
  outdatedRevocationStatusPolicy?: string;
  public?: boolean;
  downloadable?: boolean;
  refresh?: string | null;
  timeout?: string | null;
}

export type CaChange = { tenant: string; kind: 'create' | 'update' | 'delete'; ca: CaRecord; previous?: CaRecord };

export const DEFAULT_REVOCATION_POLICY = 'lastavailablestatus';

const invalid = (message: string) => new ProblemError('CA-002', { message });
const exists = (message: string) => new ProblemError('CA-004', { message });

function httpUrl(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null || value.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid(`${field}: "${value}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`${field}: only http and https URLs are fetched ("${value}")`);
  return url.toString();
}

function duration(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null || value.trim() === '') return null;
  if (parseDuration(value) === null) throw invalid(`${field}: "${value}" is not a duration such as "10 seconds" or "12 hours"`);
  return value.trim();
}

/**
 * Imported CAs (spec "Certificate authority"): the certificate is parsed and checked once, at import; the
 * flags say what the CA is trusted for (chain validation, discovery, X509 login). Nothing is written
 * unless every check passes. Listeners (the CRL cache) hear about every committed change.
 */
export class CaService {
  private readonly listeners: ((change: CaChange) => Promise<void>)[] = [];

  constructor(
    private readonly store: CaStore,
    private readonly events: EventStore,
    private readonly clock: () => number,
    /** Set on a service bound to a transaction (within): its events join it, its changes are told later. */
    private readonly bound?: { trx: Knex.Transaction; changed: (change: CaChange) => void },
  ) {}

  /**
   * This service writing through `trx` (a configuration import's transaction): events in it, and each change
   * handed to `changed` instead of the listeners (trust chains and CRL cache read through other connections:
   * the caller tells them with `notify` once the transaction committed).
   */
  within(trx: Knex.Transaction, changed: (change: CaChange) => void): CaService {
    return new CaService(this.store.on(trx), this.events, this.clock, { trx, changed });
  }

  /** Runs the change listeners (after a transaction's commit, for changes made `within` it). */
  async notify(change: CaChange): Promise<void> {
    for (const listener of this.listeners) await listener(change);
  }

  onChange(listener: (change: CaChange) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async list(tenant: string): Promise<CaView[]> {
    return (await this.store.list(tenant)).map(view);
  }

  /** The stored records (not their views): the configuration registry's portable form is built from them. */
  async records(tenant: string): Promise<CaRecord[]> {
    return this.store.list(tenant);
  }

  async exists(tenant: string, name: string): Promise<boolean> {
    return (await this.store.byName(tenant, name)) !== undefined;
  }

  async get(tenant: string, name: string): Promise<CaView> {
    return view(await this.require(tenant, name));
  }

  async require(tenant: string, name: string): Promise<CaRecord> {
    const ca = await this.store.byName(tenant, name);
    if (!ca) throw new ProblemError('CA-003', { message: `No certificate authority is named "${name}"` });
    return ca;
  }

  async create(tenant: string, input: CaInput, principal: string | null): Promise<CaView> {
    if (input.certificate === undefined) throw invalid('certificate: a CA certificate (PEM) is required');
    const fields = this.fields(input, input.certificate);
    if (await this.store.byName(tenant, input.name)) throw exists(`A certificate authority named "${input.name}" already exists`);
    await this.refuseDuplicate(tenant, fields, null);
    let ca: CaRecord;
    try {
      ca = await this.store.insert(tenant, newId(this.clock()), fields);
    } catch (err) {
      // Two imports racing past the checks above: the unique indexes decide.
      if (isUniqueViolation(err)) throw exists(`A certificate authority named "${input.name}" or with this certificate already exists`);
      throw err;
    }
    await this.committed({ tenant, kind: 'create', ca }, principal);
    return view(ca);
  }

  /** PUT on the collection: `key` is the `_id` (to rename) or the name of the CA to update. */
  async update(tenant: string, key: string, input: CaInput, principal: string | null): Promise<CaView> {
    const current = (await this.store.byId(tenant, key)) ?? (await this.require(tenant, key));
    const fields = this.fields(input, input.certificate ?? current.certificate, current);
    if (input.name !== current.name && (await this.store.byName(tenant, input.name))) {
      throw exists(`A certificate authority named "${input.name}" already exists`);
    }
    await this.refuseDuplicate(tenant, fields, current.id);
    let ca: CaRecord;
    try {
      ca = await this.store.update(tenant, current.id, fields);
    } catch (err) {
      if (isUniqueViolation(err)) throw exists(`A certificate authority named "${input.name}" or with this certificate already exists`);
      throw err;
    }
    await this.committed({ tenant, kind: 'update', ca, previous: current }, principal);
    return view(ca);
  }

  async remove(tenant: string, name: string, principal: string | null): Promise<void> {
    const ca = await this.require(tenant, name);
    await this.store.remove(tenant, ca.id);
    await this.committed({ tenant, kind: 'delete', ca }, principal);
  }

  /** Validates the input and the certificate (unchanged flags keep `current`'s values on update). */
  private fields(input: CaInput, certificate: string, current?: CaRecord): CaFields {
    const { info, der } = readCaCertificate(certificate);
    const flag = (value: boolean | undefined, fallback: boolean | undefined) => value ?? fallback ?? false;
    return {
      name: input.name,
      certificate: toPem(der),
      subjectDn: info.dn,
      issuerDn: info.issuer,
      ski: info.extensions.subjectKeyIdentifier ?? null,
      aki: info.extensions.authorityKeyIdentifier?.keyIdentifier ?? null,
      serial: info.serial,
      thumbprintSha1: info.thumbprints.sha1,
      thumbprintSha256: info.thumbprints.sha256,
      publicKeyThumbprint: info.publicKeyThumbprint,
      notBefore: info.notBefore,
      notAfter: info.notAfter,
      selfSigned: info.selfSigned,
      trusted: flag(input.trusted ?? input.trustedForServerAuthentication, current?.trusted),
      trustedForClientAuth: flag(input.trustedForClientAuthentication, current?.trustedForClientAuth),
      crlUrl: input.crlUrl === undefined ? (current?.crlUrl ?? null) : httpUrl('crlUrl', input.crlUrl),
      ocspUrl: input.responderUrl === undefined ? (current?.ocspUrl ?? null) : httpUrl('responderUrl', input.responderUrl),
      outdatedRevocationStatusPolicy: input.outdatedRevocationStatusPolicy ?? current?.outdatedRevocationStatusPolicy ?? DEFAULT_REVOCATION_POLICY,
      public: flag(input.public, current?.public),
      downloadable: flag(input.downloadable, current?.downloadable),
      refresh: input.refresh === undefined ? (current?.refresh ?? null) : duration('refresh', input.refresh),
      timeout: input.timeout === undefined ? (current?.timeout ?? null) : duration('timeout', input.timeout),
    };
  }

  private async refuseDuplicate(tenant: string, fields: CaFields, self: string | null): Promise<void> {
    const same = await this.store.byThumbprint(tenant, fields.thumbprintSha256);
    if (same && same.id !== self) throw exists(`This certificate is already imported as the certificate authority "${same.name}"`);
  }

  private async committed(change: CaChange, principal: string | null): Promise<void> {
    await this.events.append(
      {
      tenant: change.tenant,
      code: `CA-${change.kind.toUpperCase()}`,
      module: 'pki',
      status: 'success',
      principal,
      objectType: 'ca',
      objectId: change.ca.name,
      payload: { dn: change.ca.subjectDn, thumbprint: change.ca.thumbprintSha1, trusted: change.ca.trusted, trustedForClientAuthentication: change.ca.trustedForClientAuth },
      },
      this.bound ? { trx: this.bound.trx } : {},
    );
    if (this.bound) this.bound.changed(change);
    else await this.notify(change);
  }
}

