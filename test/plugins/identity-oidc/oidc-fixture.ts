/**
 * A real OpenID provider for the tests: the `oidc-provider` package on 127.0.0.1 (a free port), one confidential
 * client, accounts whose claims the test changes between logins, and its development login and consent forms,
 * which `authorize` fills in the way a browser would (cookies kept, redirects followed by hand).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface Account {
  name?: string;
  email?: string;
  preferred_username?: string;
  groups?: string[] | string;
  roles?: string[] | string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Account>;
  /**
   * Follows an authorization URL through the provider's forms, logged in as `login`, up to the redirect to
   * `redirectPrefix`; answers that callback URL (with code, state, iss).
   */
  authorize(authorizationUrl: string, login: string, redirectPrefix: string): Promise<URL>;
  /** Every request the provider received (path and the client's Authorization header), to check the flow. */
  requests: { method: string; path: string }[];
  close(): Promise<void>;
}

export async function startIdp(redirectUris: string[], clientSecret = 'idp-client-secret-Kd93!xq'): Promise<TestIdp> {
  const requests: TestIdp['requests'] = [];
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/' });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map<string, Account>();
  const clientId = 'certwright-test';

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups', 'roles'],
    },
    // The ID token carries the claims too (not only userinfo), as Entra ID and Keycloak do by default.
    conformIdTokenClaims: false,
    cookies: { keys: ['oidc-fixture-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
  });
  // An unknown account id makes the dev login fail loudly rather than loop.
  handler = provider.callback() as unknown as typeof handler;

  async function authorize(authorizationUrl: string, login: string, redirectPrefix: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(authorizationUrl);
    let method = 'GET';
    let body: string | undefined;
    for (let step = 0; step < 20; step++) {
      const res = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq).trim();
        const value = pair!.slice(eq + 1).trim();
        if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') jar.delete(name);
        else jar.set(name, value);
      }
      if (res.status === 302 || res.status === 303) {
        const next = new URL(res.headers.get('location')!, url);
        await res.arrayBuffer();
        if (next.href.startsWith(redirectPrefix)) return next;
        url = next;
        method = 'GET';
        body = undefined;
        continue;
      }
      const html = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (res.status !== 200 || !prompt || !action) throw new Error(`the provider answered ${res.status}: ${html.slice(0, 500)}`);
      url = new URL(action.replaceAll('&amp;', '&'), url);
      method = 'POST';
      body = prompt === 'login' ? new URLSearchParams({ prompt, login, password: 'any' }).toString() : new URLSearchParams({ prompt }).toString();
    }
    throw new Error('too many steps at the provider');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    authorize,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
