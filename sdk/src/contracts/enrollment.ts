/**
 * The enrollment facade (`ctx.enrollment`, SDK 1.8): what a protocol plugin (ACME, EST, SCEP, MDM…) needs
 * to issue, and nothing else. Every call goes through the platform's request workflow, so permissions,
 * approval, events, triggers and PKI queues apply exactly as for WebRA, with the protocol's authenticated
 * identity as the requester.
 */

/** A certificate profile as a protocol sees it: only when the protocol is enabled on it. */
export interface ProtocolProfile {
  name: string;
  /** The profile's description (English, else its first language), when it has one. */
  description?: string;
  /** The profile's settings for this protocol (`protocols.<protocol>` of the profile), `enabled` included. */
  settings: Record<string, unknown> & { enabled: true };
  validityDays: number;
  /** Key types the profile's key policy authorizes (`rsa-2048`, `ec-secp256r1`, …). */
  authorizedKeyTypes: string[];
}

/** Where a request stands, as the protocol reports it to its client. */
export interface EnrollmentOutcome {
  requestId: string;
  /** The request's status: `completed` (issued or revoked), `pending` (awaiting approval), `approved` (queued at the PKI), `denied`, `canceled`, `failed`. */
  status: string;
  /** Issued: the certificate and its chain (issuer first, root last), PEM. */
  certificatePem?: string;
  chainPem?: string[];
  /** Inventory id of the certificate (completed enroll). */
  certificateId?: string;
  /** Failed or denied: why, in words a client may be shown. */
  error?: string;
}

export interface EnrollInput {
  protocol: string;
  profile: string;
  csrPem: string;
  /** Who asks, as the protocol authenticated it (`acme:<account>`, an EST user…): the request's requester. */
  requester: string;
  /** Subject and SANs to request (the profile's rules apply); absent: taken from the CSR. */
  subject?: { element: string; value: string }[];
  sans?: { type: 'DNSNAME' | 'IPADDRESS' | 'RFC822NAME' | 'URI'; value: string[] }[];
  tenant?: string;
  /**
   * The protocol's own service certificate (an SCEP RA's), issued without waiting for an approver even when the
   * profile's protocol settings say `requireApproval`. Never for a client's request. Since SDK 1.9.
   */
  service?: boolean;
}

/** A one-time challenge a protocol hands out itself (an NDES-style admin page, Jamf's webhook). Since SDK 1.9. */
export interface ChallengeInput {
  protocol: string;
  profile: string;
  /** Who asked for it (a local account, `jamf:<server>`…): the challenge request's requester. */
  requester: string;
  tenant?: string;
}

export interface IssuedChallenge {
  challenge: string;
  requestId: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** A certificate of the inventory as a protocol may hand it back (SCEP GetCert). Since SDK 1.9. */
export interface InventoryCertificate {
  id: string;
  certificatePem: string;
  profile: string | null;
  revoked: boolean;
}

/** A renewal of a certificate the protocol authenticated its client by (EST simplereenroll, SCEP RenewalReq). Since SDK 1.9. */
export interface RenewInput {
  protocol: string;
  /** The certificate being renewed (PEM); it must be in the inventory under a profile serving `protocol`. */
  certificatePem: string;
  /** The new key's CSR (PEM). */
  csrPem: string;
  requester: string;
  /** Subject and SANs to request; absent: the CSR's. */
  subject?: { element: string; value: string }[];
  sans?: { type: 'DNSNAME' | 'IPADDRESS' | 'RFC822NAME' | 'URI'; value: string[] }[];
  tenant?: string;
}

/** Which protocol spends a challenge, for which profile (since SDK 1.9). */
export interface ChallengeScope {
  protocol: string;
  profile: string;
}

export interface RevokeInput {
  protocol: string;
  certificatePem: string;
  requester: string;
  /** RFC 5280 reason name (`unspecified`, `keyCompromise`, `superseded`, …). */
  reason?: string;
  tenant?: string;
}

/** A refusal a protocol maps to its own error (the CSR breaks the profile, the certificate is unknown…). */
export interface EnrollmentRefusal {
  refused: true;
  /** The platform's stable error code (WEBRA-ENROLL-…, PRF-…, CRT-…). */
  code: string;
  message: string;
}

export interface EnrollmentFacade {
  /** The enabled profile with `protocol` enabled on it, or null (unknown, disabled, or the protocol is off on it). */
  profile(protocol: string, name: string, tenant?: string): Promise<ProtocolProfile | null>;
  enroll(input: EnrollInput): Promise<EnrollmentOutcome | EnrollmentRefusal>;
  /** A renew request of the workflow on the certificate (its lineage kept). Since SDK 1.9. */
  renew(input: RenewInput): Promise<EnrollmentOutcome | EnrollmentRefusal>;
  revoke(input: RevokeInput): Promise<EnrollmentOutcome | EnrollmentRefusal>;
  /** A request's state (the certificate once issued); null when unknown. */
  request(requestId: string, tenant?: string): Promise<EnrollmentOutcome | null>;
  /** The current CRL (DER) of the profile's PKI connector, null when it signs none (SCEP GetCRL). Since SDK 1.9. */
  crl(profile: string, tenant?: string): Promise<Uint8Array | null>;
  /** The CA chain of the profile's PKI connector, issuing CA first, PEM. */
  caChain(profile: string, tenant?: string): Promise<string[]>;
  /**
   * Spends a one-time challenge (a WebRA request approved in challenge mode, its `password.value`) with the CSR
   * it was given for: the request's certificate is issued. A refusal when the challenge is unknown, spent or
   * expired (CHAL-…), or when the CSR breaks the profile. With `scope` (SDK 1.9), only a challenge submitted for
   * that protocol (`module`) and profile is spent — an EST or SCEP challenge request; without it, WebRA ones.
   */
  consumeChallenge(challenge: string, csrPem: string, tenant?: string, scope?: ChallengeScope): Promise<EnrollmentOutcome | EnrollmentRefusal>;
  /**
   * A one-time challenge for `protocol` on the profile (a challenge request of the workflow, approved at once, the
   * profile's challenge validity), spent later by consumeChallenge with the same scope. Since SDK 1.9.
   */
  newChallenge(input: ChallengeInput): Promise<IssuedChallenge | EnrollmentRefusal>;
  /**
   * The inventory's certificates of a public key (SHA-256 of its SubjectPublicKeyInfo DER, hex) that are in force and
   * not revoked, latest first: a renewal signed by the current key (EST simplereenroll without a TLS client
   * certificate) finds what it renews. Since SDK 1.9.
   */
  certificatesByPublicKey(publicKeyThumbprint: string, tenant?: string): Promise<InventoryCertificate[]>;
  /** The inventory's certificates with this serial (lower-case hex, any issuer: the caller compares issuers). Since SDK 1.9. */
  certificateBySerial(serialHex: string, tenant?: string): Promise<InventoryCertificate[]>;
  /** Whether the certificate (PEM) is in the inventory, under which profile, and revoked or not; null when unknown. */
  certificate(certificatePem: string, tenant?: string): Promise<{ id: string; profile: string | null; revoked: boolean } | null>;
}
