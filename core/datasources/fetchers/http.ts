import type { ProxyRouter } from '../../egress/proxy-router.js';
import { fetchConfigured } from '../../plugins/egress.js';
import { FetchFailure } from '../errors.js';
import type { FetchBounds, FetchSecret, HttpSettings } from '../model.js';
import { MAX_ANSWER_BYTES } from '../records.js';

/**
 * An HTTP JSON datasource: one request through the egress client (the HTTP proxy whose destinations match,
 * the address checked and pinned, redirects never followed, the answer read up to MAX_ANSWER_BYTES), the
 * records found at `recordsPath`. Private networks are allowed (a CMDB is usually internal); cloud metadata
 * addresses never are (core/plugins/egress.ts).
 */
export async function fetchHttp(settings: HttpSettings, secret: FetchSecret | null, bounds: FetchBounds, router: ProxyRouter | undefined): Promise<unknown[]> {
  const host = new URL(settings.url).host;
  const headers: Record<string, string> = { accept: 'application/json', ...(settings.headers ?? {}) };
  const method = settings.method ?? 'GET';
  if (method === 'POST' && settings.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const auth = settings.authentication ?? 'none';
  if (auth !== 'none' && !secret) throw new FetchFailure(`${host}: no credential to authenticate with`);
  if (auth === 'basic') headers.authorization = `Basic ${Buffer.from(`${secret!.login ?? ''}:${secret!.password ?? ''}`).toString('base64')}`;
  if (auth === 'bearer') headers.authorization = `Bearer ${secret!.secret ?? ''}`;
  if (auth === 'header') headers[settings.authenticationHeader!] = secret!.secret ?? '';
  let response;
  try {
    response = await fetchConfigured(
      settings.url,
      { method, headers, ...(method === 'POST' && settings.body !== undefined ? { body: settings.body } : {}) },
      { allowedHosts: ['*'], allowHttp: true, allowPrivateNetworks: true, timeoutMs: bounds.timeoutMs, maxResponseBytes: MAX_ANSWER_BYTES },
      undefined,
      router,
    );
  } catch (err) {
    // The egress client's messages name the host (or the proxy), never the path, query or headers.
    throw new FetchFailure((err as Error).message);
  }
  if (response.truncated) throw new FetchFailure(`${host}: the answer exceeds ${MAX_ANSWER_BYTES} bytes`);
  if (response.status < 200 || response.status > 299) throw new FetchFailure(`${host} answered HTTP ${response.status}`);
  let document: unknown;
  try {
    document = JSON.parse(response.body);
  } catch {
    throw new FetchFailure(`${host} did not answer JSON`);
  }
  const path = settings.recordsPath ?? '';
  let records: unknown = document;
  for (const segment of path === '' ? [] : path.split('.')) {
    records = records !== null && typeof records === 'object' && Object.hasOwn(records, segment) ? (records as Record<string, unknown>)[segment] : undefined;
  }
  if (!Array.isArray(records)) throw new FetchFailure(`${host}: ${path === '' ? 'the answer' : `recordsPath "${path}"`} is not an array of records`);
  return records;
}
