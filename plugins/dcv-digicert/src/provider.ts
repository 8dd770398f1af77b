/**
 * The `digicert` DCV provider: domain control proven to DigiCert CertCentral with its DNS TXT method.
 *
 * prepare: the domain is looked up under the configured organization (List domains, exact name); absent, it is added
 * with dcv_method dns-txt-token (Add domain); present, its DCV method is switched to dns-txt-token when it is another
 * one (Change domain DCV method) and a new random value is asked for (Generate domain DCV random value) unless
 * `freshToken` is off. The value is published through the policy's provisioner (`context.publish`: zone, CNAME
 * delegation and propagation are the kernel's) at `_dnsauth.<domain>` or `<domain>`, the two names DigiCert reads.
 * verify: DigiCert is asked to check now (Check domain DCV). cleanUp: the record goes.
 *
 * Calls go to an administrator-configured URL, so through ctx.http.fetchConfigured (https and public addresses unless
 * the instance allows http / private networks, no redirects, answers capped). The API key is a credential, resolved
 * per call so a rotated key is used at once.
 */
import {
  ConfigurationError,
  PermanentError,
  TransientError,
  type DcvChallenge,
  type DcvContext,
  type DcvProvider,
  type DnsRecord,
  type PluginContext,
} from '@certwright/sdk';
import {
  DEFAULT_BASE_URL,
  DNS_TXT_TOKEN,
  type DcAddDomainRequest,
  type DcAddDomainResponse,
  type DcChangeDcvMethodResponse,
  type DcCheckDcvResponse,
  type DcDomain,
  type DcErrorBody,
  type DcListDomainsResponse,
  type DcNewTokenResponse,
} from './wire.js';

export interface DigicertConfig {
  baseUrl?: string;
  apiKeyCredential: string;
  organizationId: number;
  validationTypes?: string[];
  recordLabel?: '_dnsauth' | '@';
  freshToken?: boolean;
  ttl?: number;
  allowHttp?: boolean;
  allowPrivateNetworks?: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
}

type Method = 'GET' | 'POST' | 'PUT';
interface Answer {
  status: number;
  json: unknown;
  text: string;
}

/** What the domain's status (Check domain DCV, Domain info) says of the validation. */
const VALID = new Set(['active', 'approved', 'validated', 'complete', 'completed', 'valid']);
const REFUSED = new Set(['rejected', 'expired', 'revoked', 'invalid', 'denied']);
/** Check domain DCV's 400 codes that mean "not found yet": the record is not (yet) where DigiCert looks. */
const NOT_SEEN_YET = /^(invalid_dns_txt|dns_lookup_failed|random_value_not_found|invalid_dns_txt_token)/;

const needContext = (context: DcvContext | undefined): DcvContext => {
  if (!context) throw new ConfigurationError('the digicert provider runs inside a DCV policy (it publishes the random value through the policy\'s provisioner)');
  return context;
};

function errorsOf(answer: Answer): { code: string; message: string }[] {
  const body = answer.json as DcErrorBody | null;
  return Array.isArray(body?.errors) ? body.errors.map((e) => ({ code: String(e?.code ?? ''), message: String(e?.message ?? '') })) : [];
}

function describeErrors(answer: Answer): string {
  const errors = errorsOf(answer);
  if (errors.length > 0) return errors.map((e) => (e.message ? `${e.message} (${e.code})` : e.code)).join('; ');
  return answer.text.slice(0, 300) || '(no body)';
}

export function digicertProvider(ctx: PluginContext, instanceName: string, config: DigicertConfig): DcvProvider {
  const base = (config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/*$/, '/');
  const origin = new URL(base).origin;
  const organizationId = config.organizationId;
  const label = config.recordLabel ?? '_dnsauth';
  const ttl = config.ttl ?? 60;
  const log = ctx.logger.child({ provider: instanceName });
  const policy = {
    allowedHosts: [new URL(base).hostname.replace(/^\[(.*)\]$/, '$1')],
    allowHttp: config.allowHttp ?? false,
    allowPrivateNetworks: config.allowPrivateNetworks ?? false,
    timeoutMs: config.timeoutMs ?? 15_000,
    maxResponseBytes: config.maxResponseBytes ?? 1024 * 1024,
  };

  async function apiKey(): Promise<string> {
    try {
      const secret = (await ctx.credentials.resolve(config.apiKeyCredential, { kind: 'raw', target: 'dcv' })).secret;
      if (!secret) throw new ConfigurationError(`credential "${config.apiKeyCredential}" holds no secret (the DigiCert CertCentral API key)`);
      return secret;
    } catch (err) {
      if (err instanceof PermanentError && !(err instanceof ConfigurationError)) throw new ConfigurationError(`DigiCert CertCentral API key: ${err.message}`, { cause: err });
      throw err;
    }
  }

  /** One API call; any HTTP status resolves (the callers decide), network failures reject with TransientError. */
  async function send(method: Method, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { 'x-dc-devkey': await apiKey(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await ctx.http.fetchConfigured(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }, policy);
    if (answer.truncated) throw new ConfigurationError(`DigiCert CertCentral at ${origin} answered more than ${policy.maxResponseBytes} bytes: raise maxResponseBytes`);
    let json: unknown = null;
    if (answer.body !== '') {
      try {
        json = JSON.parse(answer.body) as unknown;
      } catch {
        json = null;
      }
    }
    return { status: answer.status, json, text: answer.body };
  }

  /** The typed error for an answer that is not a success: what the administrator or the kernel must do next. */
  function failure(answer: Answer, what: string): Error {
    const detail = describeErrors(answer);
    if (answer.status === 401 || answer.status === 403) {
      return new ConfigurationError(`DigiCert CertCentral at ${origin} refused the API key of credential "${config.apiKeyCredential}" (${what}: HTTP ${answer.status}: ${detail})`);
    }
    if (answer.status === 429 || answer.status >= 500) return new TransientError(`DigiCert CertCentral at ${origin} failed (${what}: HTTP ${answer.status}: ${detail})`);
    if (answer.status === 404 && errorsOf(answer).some((e) => e.code === 'not_found|route')) {
      return new ConfigurationError(`DigiCert CertCentral at ${origin} has no such endpoint (${what}: HTTP 404: ${detail}); check baseUrl (${base})`);
    }
    return new PermanentError(`DigiCert CertCentral refused ${what} (HTTP ${answer.status}): ${detail}`);
  }

  async function call<T>(method: Method, path: string, what: string, body?: unknown): Promise<T> {
    const answer = await send(method, path, body);
    if (answer.status < 200 || answer.status >= 300) throw failure(answer, what);
    if (answer.json === null && answer.text !== '') throw new PermanentError(`DigiCert CertCentral answered ${what} with something that is not JSON (HTTP ${answer.status})`);
    return (answer.json ?? {}) as T;
  }

  /** The account's domain of exactly this name under the configured organization (List domains, filters[search]). */
  async function findDomain(domain: string): Promise<DcDomain | null> {
    const list = await call<DcListDomainsResponse>('GET', `domain?filters[search]=${encodeURIComponent(domain)}&limit=100`, `the lookup of ${domain}`);
    const matches = (list.domains ?? []).filter((d) => d.name?.toLowerCase() === domain && d.organization?.id === organizationId && typeof d.id === 'number');
    return matches.find((d) => d.is_active !== false) ?? matches[0] ?? null;
  }

  async function addDomain(domain: string): Promise<{ id: number; token: string | null }> {
    const request: DcAddDomainRequest = {
      name: domain,
      organization: { id: organizationId },
      validations: (config.validationTypes ?? ['ov']).map((type) => ({ type })),
      dcv_method: DNS_TXT_TOKEN,
      keep_www: true,
    };
    const answer = await send('POST', 'domain', request);
    if (answer.status < 200 || answer.status >= 300) {
      const organizationProblem = answer.status === 404 || errorsOf(answer).some((e) => /organization/i.test(`${e.code} ${e.message}`));
      if (organizationProblem && answer.status !== 401 && answer.status !== 403 && answer.status !== 429 && answer.status < 500) {
        throw new ConfigurationError(`DigiCert CertCentral has no organization ${organizationId} for this API key (adding ${domain}: HTTP ${answer.status}: ${describeErrors(answer)}); check organizationId`);
      }
      throw failure(answer, `adding the domain ${domain}`);
    }
    const added = (answer.json ?? {}) as DcAddDomainResponse;
    if (typeof added.id !== 'number') throw new PermanentError(`DigiCert CertCentral added ${domain} but its answer names no domain id`);
    log.info({ domain, domainId: added.id }, 'domain added to DigiCert CertCentral for dns-txt-token validation');
    return { id: added.id, token: added.dcv_token?.token ?? null };
  }

  async function newToken(id: number, domain: string): Promise<string> {
    const fresh = await call<DcNewTokenResponse>('POST', `domain/${id}/dcv/token`, `a new random value for ${domain}`);
    if (!fresh.token) throw new PermanentError(`DigiCert CertCentral gave no random value for ${domain} (domain ${id})`);
    return fresh.token;
  }

  /** The domain's id at DigiCert and the random value to publish. */
  async function tokenFor(domain: string): Promise<{ id: number; token: string }> {
    const found = await findDomain(domain);
    if (!found) {
      const added = await addDomain(domain);
      return { id: added.id, token: added.token ?? (await newToken(added.id, domain)) };
    }
    const id = found.id!;
    const info = await call<DcDomain>('GET', `domain/${id}?include_dcv=true`, `the details of ${domain}`);
    if (info.dcv_method !== DNS_TXT_TOKEN) {
      const changed = await call<DcChangeDcvMethodResponse>('PUT', `domain/${id}/dcv/method`, `the DCV method of ${domain}`, { dcv_method: DNS_TXT_TOKEN });
      if (changed.dcv_token?.token) return { id, token: changed.dcv_token.token };
    } else if (config.freshToken === false && info.dcv_token?.token && !REFUSED.has(String(info.dcv_token.status ?? ''))) {
      return { id, token: info.dcv_token.token };
    }
    return { id, token: await newToken(id, domain) };
  }

  /** Domain info's word on a domain DigiCert did not (yet) validate: refused for good, or still open. */
  async function refusedByDigicert(id: number, domain: string): Promise<string | null> {
    const info = await call<DcDomain>('GET', `domain/${id}?include_dcv=true`, `the details of ${domain}`);
    const status = String(info.status ?? '').toLowerCase();
    if (REFUSED.has(status)) return `the domain is ${status}`;
    const tokenStatus = String(info.dcv_token?.status ?? '').toLowerCase();
    if (REFUSED.has(tokenStatus)) return `its random value is ${tokenStatus}`;
    return null;
  }

  return {
    async prepare(rawDomain, context): Promise<DcvChallenge> {
      const dcv = needContext(context);
      const domain = rawDomain.toLowerCase().replace(/\.$/, '');
      const { id, token } = await tokenFor(domain);
      const fqdn = label === '@' ? domain : `${label}.${domain}`;
      const record: DnsRecord = await dcv.publish({ fqdn, type: 'TXT', value: token, ttl });
      return { domain, method: DNS_TXT_TOKEN, token, data: { domainId: id, fqdn, record } };
    },

    async verify(challenge) {
      const id = Number(challenge.data?.domainId);
      const answer = await send('PUT', `domain/${id}/dcv/validate-token`);
      if (answer.status >= 200 && answer.status < 300) {
        const status = String((answer.json as DcCheckDcvResponse | null)?.status ?? '').toLowerCase();
        if (VALID.has(status)) return 'valid';
        if (REFUSED.has(status)) {
          // A refusal with DigiCert's word for it (the run's error, and final: no retry undoes a refusal).
          throw new PermanentError(`DigiCert CertCentral refused ${challenge.domain} (domain ${id}): status ${status}`);
        }
        return 'pending';
      }
      if (answer.status === 400 && errorsOf(answer).some((e) => NOT_SEEN_YET.test(e.code))) {
        const refused = await refusedByDigicert(id, challenge.domain);
        if (refused) {
          throw new PermanentError(`DigiCert CertCentral refused ${challenge.domain} (domain ${id}): ${refused}`);
        }
        return 'pending';
      }
      throw failure(answer, `the DCV check of ${challenge.domain}`);
    },

    async cleanUp(challenge, context) {
      const record = challenge.data?.record as DnsRecord | undefined;
      if (record) await needContext(context).unpublish(record);
    },
  };
}
