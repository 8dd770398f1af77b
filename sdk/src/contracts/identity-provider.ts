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
}

export interface AuthenticationInput {
  /** The request headers (names lower-case). */
  headers: Record<string, string | string[] | undefined>;
  tenant: string;
  clientCertificatePem?: string;
  remoteAddress?: string;
}

export interface IdentityProvider {
  /** The principal the credentials in `input` prove, or null when they prove nothing to this provider. */
  authenticate(input: AuthenticationInput): Promise<Principal | null>;
  /**
   * The principal as it stands now, or null when it no longer exists or may no longer log in. The
   * security core calls it when a session cookie comes back, so a removed account loses its sessions.
   */
  lookup?(identifier: string, tenant: string): Promise<Principal | null>;
  /** SCEP / EST / MDM enrollment challenges. */
  validateEnrollmentSecret?(profile: string, secret: string): Promise<boolean>;
}
