/** Who is calling, as identity providers and the security core describe it. */
export interface Principal {
  identifier: string;
  name?: string;
  email?: string;
  identityProviderName: string;
  identityProviderType: string;
  tenant: string;
}

export interface AuthenticationInput {
  headers: Record<string, string | string[] | undefined>;
  clientCertificatePem?: string;
  remoteAddress?: string;
}

export interface IdentityProvider {
  authenticate(input: AuthenticationInput): Promise<Principal | null>;
  /** SCEP / EST / MDM enrollment challenges. */
  validateEnrollmentSecret?(profile: string, secret: string): Promise<boolean>;
}
