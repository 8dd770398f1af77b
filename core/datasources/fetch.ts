import type { CredentialsFacade, ResolvedCredential } from '@certwright/sdk';
import type { ProxyRouter } from '../egress/proxy-router.js';
import { credentialKindOf } from './config-type.js';
import { FetchFailure } from './errors.js';
import { fetchDatabase } from './fetchers/database.js';
import { fetchHttp } from './fetchers/http.js';
import { fetchLdap } from './fetchers/ldap.js';
import type { Datasource, DatasourceRecord, FetchBounds, FetchSecret } from './model.js';
import { boundedRecords } from './records.js';

export interface FetchDeps {
  credentials: CredentialsFacade;
  /** The egress proxies HTTP datasources go through. */
  proxies: ProxyRouter;
  dataDir: string;
}

export interface Fetched {
  records: DatasourceRecord[];
  durationMs: number;
}

/** The grace past a fetch's own deadline before it is given up (each fetcher stops itself at timeoutMs). */
const GRACE_MS = 1000;

/**
 * Fetches one datasource now: its credential opened at the time of use (a rotation applies at once), the
 * kind's fetcher, then the bounds on records. Every failure is a FetchFailure whose message is safe to
 * answer and log; a secret never reaches it.
 */
export async function fetchDatasource(tenant: string, d: Datasource, deps: FetchDeps, clock: () => number = Date.now): Promise<Fetched> {
  const started = clock();
  const bounds: FetchBounds = { timeoutMs: d.timeoutMs ?? 10_000, maxRecords: d.maxRecords ?? 1000 };
  const secret = typeof d.credential === 'string' ? await openCredential(tenant, d, deps.credentials) : null;
  const origin = originOf(d);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchFailure(`${origin}: no answer within ${bounds.timeoutMs} ms`)), bounds.timeoutMs + GRACE_MS);
  });
  try {
    const raw = await Promise.race([run(d, secret, bounds, deps), deadline]);
    return { records: boundedRecords(raw, bounds.maxRecords, origin), durationMs: clock() - started };
  } catch (err) {
    if (err instanceof FetchFailure) throw err;
    throw new FetchFailure(`${origin}: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

function run(d: Datasource, secret: FetchSecret | null, bounds: FetchBounds, deps: FetchDeps): Promise<unknown[]> {
  switch (d.kind) {
    case 'http':
      return fetchHttp(d.http!, secret, bounds, deps.proxies);
    case 'ldap':
      return fetchLdap(d.ldap!, secret, bounds);
    case 'database':
      return fetchDatabase(d.database!, secret, bounds, deps.dataDir);
  }
}

/** Where the data comes from, for messages: the host of its URL (never a path, query or user). */
export function originOf(d: Datasource): string {
  const raw = d.http?.url ?? d.ldap?.url ?? d.database?.url ?? '';
  if (/^sqlite:/i.test(raw)) return 'sqlite';
  try {
    return new URL(raw.replace(/^mariadb:/i, 'mysql:')).host || d.kind;
  } catch {
    return d.kind;
  }
}

async function openCredential(tenant: string, d: Datasource, credentials: CredentialsFacade): Promise<FetchSecret> {
  let c: ResolvedCredential;
  try {
    c = await credentials.resolve(d.credential!, { tenant, kind: credentialKindOf(d) as ResolvedCredential['type'], target: 'datasource' });
  } catch (err) {
    throw new FetchFailure(`credential: ${(err as Error).message.replace(/^credential /, '')}`);
  }
  return { ...(c.login !== undefined ? { login: c.login } : {}), ...(c.password !== undefined ? { password: c.password } : {}), ...(c.secret !== undefined ? { secret: c.secret } : {}) };
}
