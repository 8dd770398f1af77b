/** Who is calling, as identity providers and the security core describe it. */
export interface Principal {
  identifier: string;
  name?: string;
  email?: string;
  identityProviderName: string;
  identityProviderType: string;
  tenant: string;
  /** When the principal's credentials last changed (epoch ms): sessions opened before are refused. */
  credentialsChangedAt?: number;
  /**
   * Roles and teams the provider vouches for (an OpenID Connect claim mapping). The security core makes
   * the principal a member of those that exist, at each interactive login, and drops the memberships this
   * provider granted earlier that the login no longer names. Since SDK 1.10.
   */
  roles?: string[];
  teams?: string[];
}

export interface AuthenticationInput {
  /** The request headers (names lower-case). */
  headers: Record<string, string | string[] | undefined>;
  tenant: string;
  /** The client certificate of the TLS connection (PEM), when the HTTPS listener received one (since SDK 1.10). */
  clientCertificatePem?: string;
  /** The client's address (behind trusted proxies: the address they forwarded). */
  remoteAddress?: string;
  /** The address of the TCP peer itself: a reverse proxy when there is one (since SDK 1.10). */
  connectionAddress?: string;
}

/**
 * A login through the browser and another party (OpenID Connect's authorization code flow). The security core
 * serves GET /api/v1/security/identity/providers/:name/login and .../:name/callback for a provider that has
 * one: `start` says where to send the browser and what to remember; the core keeps `state` sealed under the
 * master key in a short-lived HttpOnly cookie and hands it back to `finish` with the callback's query. A
 * principal from `finish` gets PLAY_SESSION like a local login. Since SDK 1.10.
 */
export interface InteractiveLogin {
  start(input: { tenant: string; callbackUrl: string }): Promise<{ redirectUrl: string; state: Record<string, string> }>;
  /** The principal the callback proves, or null (401). Throwing is also a refusal (logged, never shown). */
  finish(input: { tenant: string; callbackUrl: string; callbackQuery: Record<string, string>; state: Record<string, string> }): Promise<Principal | null>;
}

export interface IdentityProvider {
  /** The principal the credentials in `input` prove, or null when they prove nothing to this provider. */
  authenticate(input: AuthenticationInput): Promise<Principal | null>;
  /**
   * The principal as it stands now, or null when it no longer exists or may no longer log in. The
   * security core calls it when a session cookie comes back, so a removed account loses its sessions.
   */
  lookup?(identifier: string, tenant: string): Promise<Principal | null>;
  /** Present when the provider logs in through the browser (OpenID Connect). Since SDK 1.10. */
  interactive?: InteractiveLogin;
  /** SCEP / EST / MDM enrollment challenges. */
  validateEnrollmentSecret?(profile: string, secret: string): Promise<boolean>;
}
