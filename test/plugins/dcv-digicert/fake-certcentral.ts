/**
 * A FAKE DigiCert CertCentral API — not DigiCert's service, a local stand-in for the tests of plugins/dcv-digicert.
 *
 * A node http server on 127.0.0.1 that implements only the Services API v2 calls the provider makes, written from
 * DigiCert's public documentation (dev.digicert.com › CertCentral APIs › Services API › Domains, and its Errors page):
 *
 *   GET  /services/v2/domain?filters[search]=<name>          List domains            → {"domains":[…],"page":{…}}
 *   POST /services/v2/domain                                  Add domain              → 201 {"id":…,"dcv_token":{…}}
 *   GET  /services/v2/domain/{id}?include_dcv=true            Domain info             → {"id":…,"status":…,"dcv_method":…,"dcv_token":{…}}
 *   PUT  /services/v2/domain/{id}/dcv/method                  Change domain DCV method → {"dcv_token":{…}} or {} (same method)
 *   POST /services/v2/domain/{id}/dcv/token                   Generate DCV random value → {"token":…,"expiration_date":…}
 *   PUT  /services/v2/domain/{id}/dcv/validate-token          Check domain DCV        → {"token":…,"status":"active"} | 400 invalid_dns_txt
 *
 * Like the real service it checks the `X-DC-DEVKEY` header on every call and, on a DCV check, looks the random value
 * up in DNS itself: it asks the test's BIND9 directly (node's dns Resolver) for the TXT records at `<domain>` and
 * `_dnsauth.<domain>`, the two names DigiCert's DNS TXT method reads ("DNS-based DCV methods"). Errors use the
 * documented body `{"errors":[{"code":…,"message":…}]}`.
 *
 * Where the documentation shows no body, the fake picks one and says so: a wrong key answers 401 with code
 * `access_denied|invalid_api_key` (the Errors page lists 403 `access_denied|missing_permission`, not the wrong-key
 * answer); an unknown organization on Add domain answers 404 `not_found|organization` (in the `not_found|<what>`
 * pattern of the Errors page); a domain the test marks rejected answers the DCV check 200 with status `rejected` and
 * Domain info status `rejected`.
 */
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from '../../helpers/kernel.js';

export interface FakeDomain {
  id: number;
  name: string;
  organizationId: number;
  dcvMethod: string;
  token: string | null;
  tokenStatus: string;
  status: string;
  validatedAt: string | null;
}

export interface FakeCertCentral {
  /** Base URL of the fake, `http://127.0.0.1:<port>/services/v2/`. */
  baseUrl: string;
  apiKey: string;
  organizationId: number;
  domains: Map<number, FakeDomain>;
  /** Every call: method, path (with query), the status answered. */
  calls: { method: string; path: string; status: number }[];
  /** Every DCV check: the domain, the names looked up in DNS, the values found, whether the random value was there. */
  dnsChecks: { domain: string; names: string[]; values: string[]; found: boolean }[];
  /** Names whose validation DigiCert refuses (a rejected domain). */
  rejected: Set<string>;
  /** Answers the next call with this status and body, once (429, 500, odd 400s). */
  failNext: { status: number; body: unknown } | null;
  /** A domain already in the account (added through CertCentral's console, say), with another DCV method. */
  seed(name: string, dcvMethod: string): FakeDomain;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00');
const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
/** DigiCert's random values are 32 lower-case alphanumerics in the documentation's examples. */
const randomValue = (): string => {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(32)].map((b) => alphabet[b % alphabet.length]).join('');
};

export async function startFakeCertCentral(t: TestContext, options: { dnsServer: string }): Promise<FakeCertCentral> {
  const apiKey = randomBytes(24).toString('hex');
  const organizationId = 112233;
  let nextId = 4000;
  const domains = new Map<number, FakeDomain>();
  const calls: FakeCertCentral['calls'] = [];
  const dnsChecks: FakeCertCentral['dnsChecks'] = [];
  const rejected = new Set<string>();

  const organization = (id: number) => ({ id, status: 'active', name: 'Example Corp.', display_name: 'Example Corp.', is_active: '1' });
  const dcvToken = (d: FakeDomain) => (d.token ? { token: d.token, status: d.tokenStatus, expiration_date: inDays(30) } : undefined);
  const domainJson = (d: FakeDomain, includeDcv: boolean) => ({
    id: d.id,
    is_active: true,
    status: d.status,
    is_pending_validation: d.status === 'pending',
    name: d.name,
    date_created: now(),
    ...(d.validatedAt ? { dcv_approval_datetime: d.validatedAt, dcv_expiration_datetime: inDays(397) } : {}),
    organization: organization(d.organizationId),
    validations: [{ type: 'ov', name: 'OV', description: 'Normal Organization Validation', status: d.status === 'approved' ? 'active' : 'pending', dcv_status: d.validatedAt ? 'complete' : 'pending' }],
    dcv_method: d.dcvMethod,
    ...(includeDcv && dcvToken(d) ? { dcv_token: dcvToken(d) } : {}),
  });
  const newDomain = (name: string, org: number, dcvMethod: string): FakeDomain => {
    const d: FakeDomain = { id: nextId++, name, organizationId: org, dcvMethod, token: dcvMethod.endsWith('-token') ? randomValue() : null, tokenStatus: 'pending', status: 'pending', validatedAt: null };
    domains.set(d.id, d);
    return d;
  };

  async function txtAt(name: string): Promise<string[]> {
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([options.dnsServer]);
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch {
      return [];
    }
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return undefined;
    return JSON.parse(text) as unknown;
  }

  const fake: FakeCertCentral = {
    baseUrl: '',
    apiKey,
    organizationId,
    domains,
    calls,
    dnsChecks,
    rejected,
    failNext: null,
    seed: (name, dcvMethod) => newDomain(name, organizationId, dcvMethod),
  };

  async function route(req: IncomingMessage): Promise<{ status: number; body?: unknown }> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const error = (status: number, code: string, message: string) => ({ status, body: { errors: [{ code, message }] } });
    if (req.headers['x-dc-devkey'] !== apiKey) return error(401, 'access_denied|invalid_api_key', 'The API key is not valid.');
    if (fake.failNext) {
      const { status, body } = fake.failNext;
      fake.failNext = null;
      return { status, body };
    }
    const path = url.pathname.replace(/^\/services\/v2\//, '');
    if (path === url.pathname) return error(404, 'not_found|route', 'The requested route was not found.');
    const method = req.method ?? 'GET';
    let body: unknown;
    try {
      body = await readBody(req);
    } catch {
      return error(400, 'bad_request_format', 'The request body is malformed.');
    }

    if (path === 'domain' && method === 'GET') {
      const search = url.searchParams.get('filters[search]');
      const list = [...domains.values()].filter((d) => !search || (search.startsWith('%') ? d.name.includes(search.slice(1)) : d.name === search));
      return { status: 200, body: { domains: list.map((d) => domainJson(d, false)), page: { total: list.length, limit: Number(url.searchParams.get('limit') ?? 1000), offset: 0 } } };
    }
    if (path === 'domain' && method === 'POST') {
      const b = (body ?? {}) as { name?: string; organization?: { id?: number }; validations?: { type?: string }[]; dcv_method?: string; keep_www?: boolean };
      if (!b.name) return error(400, 'missing_param|name', 'Missing required parameter: name.');
      if (!Array.isArray(b.validations) || b.validations.length === 0) return error(400, 'missing_param|validations', 'At least one validation type is required.');
      if (b.organization?.id !== organizationId) return error(404, 'not_found|organization', 'The specified organization was not found.');
      const name = b.keep_www === true || b.dcv_method === 'http-token' ? b.name : b.name.replace(/^www\./, '');
      const d = newDomain(name, organizationId, b.dcv_method ?? 'email');
      return { status: 201, body: { id: d.id, ...(dcvToken(d) ? { dcv_token: dcvToken(d) } : {}) } };
    }
    const m = /^domain\/(\d+)(\/.*)?$/.exec(path);
    const d = m ? domains.get(Number(m[1])) : undefined;
    if (!m || !d) return error(404, 'not_found', 'The requested domain was not found.');
    const rest = m[2] ?? '';
    if (rest === '' && method === 'GET') return { status: 200, body: domainJson(d, url.searchParams.get('include_dcv') === 'true') };
    if (rest === '/dcv/method' && method === 'PUT') {
      const wanted = String((body as { dcv_method?: string } | undefined)?.dcv_method ?? '');
      if (!['email', 'dns-txt-token', 'dns-cname-token', 'http-token'].includes(wanted)) return error(400, 'invalid_dcv_method', 'The DCV method is not valid.');
      if (wanted === d.dcvMethod) return { status: 200, body: {} };
      d.dcvMethod = wanted;
      d.token = wanted.endsWith('-token') ? randomValue() : null;
      d.tokenStatus = 'pending';
      return { status: 200, body: d.token ? { dcv_token: dcvToken(d) } : {} };
    }
    if (rest === '/dcv/token' && method === 'POST') {
      if (!d.dcvMethod.endsWith('-token')) return error(400, 'invalid_dcv_method', 'The domain\'s DCV method does not use a random value.');
      d.token = randomValue();
      d.tokenStatus = 'pending';
      return { status: 200, body: { token: d.token, expiration_date: inDays(30) } };
    }
    if (rest === '/dcv/validate-token' && method === 'PUT') {
      if (rejected.has(d.name)) {
        d.status = 'rejected';
        return { status: 200, body: { token: d.token, status: 'rejected' } };
      }
      if (d.dcvMethod !== 'dns-txt-token') return error(400, 'invalid_dcv_method', 'The domain is not set up for a token DCV method.');
      const names = [d.name, `_dnsauth.${d.name}`];
      const values = (await Promise.all(names.map(txtAt))).flat();
      const found = d.token !== null && values.includes(d.token);
      dnsChecks.push({ domain: d.name, names, values, found });
      if (!found) return error(400, 'invalid_dns_txt', 'Could not find a valid TXT record for one or more domains.');
      d.status = 'approved';
      d.tokenStatus = 'complete';
      d.validatedAt = now();
      return { status: 200, body: { token: d.token, status: 'active' } };
    }
    return error(404, 'not_found|route', 'The requested route was not found.');
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req).then(
      ({ status, body }) => {
        calls.push({ method: req.method ?? '', path: req.url ?? '', status });
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body === undefined ? '' : JSON.stringify(body));
      },
      (err: unknown) => {
        calls.push({ method: req.method ?? '', path: req.url ?? '', status: 500 });
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 'internal_error', message: String(err) }] }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/v2/`;
  return fake;
}
