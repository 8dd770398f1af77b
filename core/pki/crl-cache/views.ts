import { ProblemError } from '../../errors/index.js';
import type { CaStore } from '../cas/store.js';
import { toPem } from '../input.js';
import type { CrlCacheRecord, CrlCacheStore } from './store.js';

/** A CA's cache entry as the API shows it (dates epoch ms). */
export interface CrlCacheView {
  ca: string;
  dn: string;
  url: string | null;
  thisUpdate: number | null;
  nextUpdate: number | null;
  crlNumber: string | null;
  entries: number | null;
  fetchedAt: number | null;
  lastAttempt: number | null;
  lastError: string | null;
  nextRefresh: number | null;
  /** GET /:ca only: the cached CRL. */
  pem?: string;
}

function view(name: string, dn: string, r: CrlCacheRecord): CrlCacheView {
  const out: CrlCacheView = {
    ca: name,
    dn,
    url: r.sourceUrl,
    thisUpdate: r.thisUpdate,
    nextUpdate: r.nextUpdate,
    crlNumber: r.crlNumber,
    entries: r.entries,
    fetchedAt: r.fetchedAt,
    lastAttempt: r.lastAttemptAt,
    lastError: r.lastError,
    nextRefresh: r.nextRefreshAt,
  };
  if (r.crl) out.pem = toPem(r.crl, 'X509 CRL');
  return out;
}

/** Every CA that has a cache entry (a CRL, or a failed attempt), by CA name. */
export async function listCrlCache(cas: CaStore, store: CrlCacheStore, tenant: string): Promise<CrlCacheView[]> {
  const byId = new Map((await cas.list(tenant)).map((ca) => [ca.id, ca]));
  return (await store.list(tenant))
    .filter((r) => byId.has(r.caId))
    .map((r) => view(byId.get(r.caId)!.name, byId.get(r.caId)!.subjectDn, r))
    .sort((a, b) => a.ca.localeCompare(b.ca));
}

/** The cached CRL of one CA; CRL-003 when none was accepted yet (the detail says why). */
export async function getCrlCache(cas: CaStore, store: CrlCacheStore, tenant: string, name: string): Promise<CrlCacheView> {
  const ca = await cas.byName(tenant, name);
  if (!ca) throw new ProblemError('CA-003', { message: `No certificate authority is named "${name}"` });
  const record = await store.get(tenant, ca.id, true);
  if (!record?.crl) {
    const why = record?.lastError ?? 'no fetch has completed yet';
    throw new ProblemError('CRL-003', { message: `No CRL is cached for the CA "${name}"`, detail: why });
  }
  return view(ca.name, ca.subjectDn, record);
}
