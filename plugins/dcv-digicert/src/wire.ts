/**
 * Wire shapes of DigiCert CertCentral's Services API (v2) for the calls this provider makes, written from DigiCert's
 * public developer documentation (dev.digicert.com, "CertCentral APIs › Services API › Domains"). Only the fields the
 * provider reads or sends are typed; DigiCert adds others (the tolerant reader ignores them). Every field is optional
 * on the way in: the code checks what it needs and says which answer lacked it.
 *
 * Authentication (every page's examples): the API key in the `X-DC-DEVKEY` header; JSON bodies.
 */

/** The documented base URL: https://www.digicert.com/services/v2/ (each page's request line). */
export const DEFAULT_BASE_URL = 'https://www.digicert.com/services/v2/';

/** The DCV method this provider uses (Glossary – DCV methods; Add domain's `dcv_method`). */
export const DNS_TXT_TOKEN = 'dns-txt-token';

/**
 * Error body of every call ("Services API › Errors"): `{"errors":[{"code":"…","message":"…"}]}`. Codes seen there:
 * 429 `request_limit_exceeded`, 404 `not_found` / `not_found|<what>`, 403 `access_denied|missing_permission`,
 * 400 `bad_request_format`… The Check domain DCV page's 400 for a TXT record not found: `invalid_dns_txt`
 * ("Could not find a valid TXT record for one or more domains.").
 */
export interface DcErrorBody {
  errors?: { code?: string; message?: string }[];
}

/** The `dcv_token` object (Add domain, Domain info with include_dcv=true, Change domain DCV method). */
export interface DcDcvToken {
  token?: string;
  /** `pending` in the examples; the domain's token status. */
  status?: string;
  expiration_date?: string;
  /** dns-cname-token only (Change domain DCV method: `dcv.digicert.com`). */
  verification_value?: string;
}

/**
 * Add domain — POST domain ("Add domain"): adds the domain under an organization and submits it for validation.
 * `validations` needs at least one type; for dns-txt-token (and email, dns-cname-token) DigiCert strips a leading
 * `www.` unless `keep_www` is true, so the provider sends keep_www to validate exactly the policy's name.
 */
export interface DcAddDomainRequest {
  name: string;
  organization: { id: number };
  validations: { type: string }[];
  dcv_method: string;
  keep_www?: boolean;
}
/** Add domain, 201 Created: the new domain's id and, for a token method, its random value. */
export interface DcAddDomainResponse {
  id?: number;
  dcv_token?: DcDcvToken;
}

/**
 * A domain as List domains (GET domain, "List domains": `domains[]`, filters[search] for an exact name) and Domain info
 * (GET domain/{id}?include_dcv=true, "Domain info") answer it. `status` is marked deprecated on the Domain info page
 * (`pending`, `approved` … in its examples); `validations[].dcv_status` (`complete`) and `dcv_token` (include_dcv)
 * come with the single-domain answer.
 */
export interface DcDomain {
  id?: number;
  name?: string;
  is_active?: boolean;
  status?: string;
  is_pending_validation?: boolean;
  dcv_method?: string;
  dcv_token?: DcDcvToken;
  dcv_approval_datetime?: string;
  dcv_expiration_datetime?: string;
  organization?: { id?: number; status?: string; name?: string };
  validations?: { type?: string; status?: string; dcv_status?: string; validated_until?: string }[];
}
export interface DcListDomainsResponse {
  domains?: DcDomain[];
  page?: { total?: number; limit?: number; offset?: number };
}

/**
 * Change domain DCV method — PUT domain/{id}/dcv/method `{"dcv_method":"dns-txt-token"}` ("Change domain DCV
 * method"): `{"dcv_token":{…}}` for a token method; `{}` when the method was already that one.
 */
export interface DcChangeDcvMethodResponse {
  dcv_token?: DcDcvToken;
}

/**
 * Generate domain DCV random value — POST domain/{id}/dcv/token ("Generate domain DCV random value"): a new random
 * value for the domain's DCV method (which must be dns-txt-token, dns-cname-token or http-token); it invalidates the
 * previous domain random value.
 */
export interface DcNewTokenResponse {
  token?: string;
  expiration_date?: string;
}

/**
 * Check domain DCV — PUT domain/{id}/dcv/validate-token, no body ("Check domain DCV"): DigiCert looks for the random
 * value now. 200 `{"token":"…","status":"active"}` (status: the domain's, `active` once validated); 400
 * `invalid_dns_txt` when it finds no TXT record with the value.
 */
export interface DcCheckDcvResponse {
  token?: string;
  status?: string;
}
