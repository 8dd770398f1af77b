/**
 * Microsoft Intune's SCEP challenge validation (the public Intune-Resource-Access library's protocol): an
 * app-only token from Entra ID, the validation service found through Microsoft Graph, then validateRequest for
 * each PKCSReq and successNotification / failureNotification after the answer. Tokens and the discovered URL
 * are kept until they expire (an hour for the URL). Calls go through the egress policy of the plugin's
 * `intune` configuration.
 */
import { randomUUID } from 'node:crypto';
import type { ConfiguredResponse, EgressHttpClient, EgressPolicy, ResolvedCredential } from '@certwright/sdk';

const INTUNE_APP_ID = '0000000a-0000-0000-c000-000000000000';
const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
const INTUNE_SCOPE = 'https://api.manage.microsoft.com//.default';
const API_VERSION = '2018-02-20';
const CALLER = 'Certwright';
const DISCOVERY_TTL_MS = 3_600_000;

export interface IntuneEndpoints {
  loginUrl: string;
  graphUrl: string;
}

export class IntuneError extends Error {}

export class IntuneClient {
  private readonly tokens = new Map<string, { token: string; until: number }>();
  private readonly services = new Map<string, { uri: string; until: number }>();

  constructor(
    private readonly deps: { http: EgressHttpClient; policy: EgressPolicy; endpoints: IntuneEndpoints; now: () => number },
  ) {}

  /** validateRequest: true when Intune answers Success for this challenge-bearing CSR. */
  async validate(tenant: string, app: ResolvedCredential, o: { transactionId: string; csrDer: Uint8Array }): Promise<{ valid: boolean; code: string; description: string }> {
    const answer = await this.action(tenant, app, 'validateRequest', { request: { transactionId: o.transactionId, certificateRequest: Buffer.from(o.csrDer).toString('base64'), callerInfo: CALLER } });
    return { valid: answer.code === 'Success', code: answer.code, description: answer.errorDescription ?? '' };
  }

  async success(tenant: string, app: ResolvedCredential, n: { transactionId: string; csrDer: Uint8Array; thumbprint: string; serial: string; notAfter: Date; issuer: string; caConfiguration: string }): Promise<void> {
    await this.action(tenant, app, 'successNotification', {
      notification: {
        transactionId: n.transactionId,
        certificateRequest: Buffer.from(n.csrDer).toString('base64'),
        certificateThumbprint: n.thumbprint,
        certificateSerialNumber: n.serial,
        certificateExpirationDateUtc: n.notAfter.toISOString(),
        issuingCertificateAuthority: n.issuer,
        callerInfo: CALLER,
        caConfiguration: n.caConfiguration,
        certificateAuthority: n.issuer,
      },
    });
  }

  async failure(tenant: string, app: ResolvedCredential, n: { transactionId: string; csrDer: Uint8Array; description: string }): Promise<void> {
    await this.action(tenant, app, 'failureNotification', {
      // 0x80004005 (E_FAIL) as a signed 32-bit HRESULT, as the library sends for a CA-side failure.
      notification: { transactionId: n.transactionId, certificateRequest: Buffer.from(n.csrDer).toString('base64'), hResult: -2147467259, errorDescription: n.description.slice(0, 255), callerInfo: CALLER },
    });
  }

  private async action(tenant: string, app: ResolvedCredential, name: string, body: unknown): Promise<{ code: string; errorDescription?: string }> {
    const service = await this.service(tenant, app);
    const res = await this.deps.http.fetchConfigured(`${service}/ScepActions/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await this.token(tenant, app, INTUNE_SCOPE)}`, 'content-type': 'application/json', 'client-request-id': randomUUID(), 'api-version': API_VERSION },
      body: JSON.stringify(body),
    }, this.deps.policy);
    const json = jsonOf(res, name) as { code?: unknown; errorDescription?: unknown };
    return { code: typeof json.code === 'string' ? json.code : 'Unknown', ...(typeof json.errorDescription === 'string' ? { errorDescription: json.errorDescription } : {}) };
  }

  /** The ScepRequestValidationFEService URL, from Graph's service principal endpoints. */
  private async service(tenant: string, app: ResolvedCredential): Promise<string> {
    const cached = this.services.get(tenant);
    if (cached && cached.until > this.deps.now()) return cached.uri;
    const res = await this.deps.http.fetchConfigured(`${this.deps.endpoints.graphUrl}/v1.0/servicePrincipals/appId=${INTUNE_APP_ID}/endpoints`, { headers: { authorization: `Bearer ${await this.token(tenant, app, GRAPH_SCOPE)}`, accept: 'application/json' } }, this.deps.policy);
    const json = jsonOf(res, 'service discovery') as { value?: { providerName?: string; uri?: string }[] };
    const found = (json.value ?? []).find((e) => typeof e.providerName === 'string' && e.providerName.toLowerCase() === 'scepRequestValidationFEService'.toLowerCase());
    if (!found?.uri) throw new IntuneError('Intune service discovery names no ScepRequestValidationFEService');
    const uri = found.uri.replace(/\/+$/, '');
    this.services.set(tenant, { uri, until: this.deps.now() + DISCOVERY_TTL_MS });
    return uri;
  }

  private async token(tenant: string, app: ResolvedCredential, scope: string): Promise<string> {
    const key = `${tenant}\u0000${app.login ?? ''}\u0000${scope}`;
    const cached = this.tokens.get(key);
    if (cached && cached.until > this.deps.now()) return cached.token;
    const form = new URLSearchParams({ client_id: app.login ?? '', client_secret: app.password ?? '', grant_type: 'client_credentials', scope });
    const res = await this.deps.http.fetchConfigured(`${this.deps.endpoints.loginUrl}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }, this.deps.policy);
    const json = jsonOf(res, 'token') as { access_token?: unknown; expires_in?: unknown };
    if (typeof json.access_token !== 'string') throw new IntuneError('Entra ID answered no access token');
    const lifetime = typeof json.expires_in === 'number' ? json.expires_in : Number(json.expires_in ?? 3600);
    this.tokens.set(key, { token: json.access_token, until: this.deps.now() + Math.max(60, lifetime - 60) * 1000 });
    return json.access_token;
  }
}

function jsonOf(res: ConfiguredResponse, what: string): unknown {
  if (res.status < 200 || res.status >= 300) throw new IntuneError(`Intune ${what} answered HTTP ${res.status}`);
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    throw new IntuneError(`Intune ${what} answered something other than JSON`);
  }
}
