/**
 * Contract tests: certificate profiles in the vendor's (Horizon's) shape, as its clients send and read them.
 *
 * - The MCP server's profile tools, evertrust/horizon-mcp src/tools/config/certificate-profiles.ts at 16a96fa
 *   (transport: mcp-config-client.ts). buildProfileBody (L217-L257) sends `{...config, module, name, enabled,
 *   authorizationLevels, requestsPolicy, selfPermissions, cryptoPolicy}`, config holding the other top-level
 *   keys (pkiConnector, authorizationMode, certificateTemplate, …; KNOWN_KEYS L106-L161); the update tool
 *   (L400-L412) merges the same keys into the GET answer and PUTs it all. Enums are those of the request
 *   schema it describes (src/tools/config/schemas/certificate-profiles.schema.json, $defs AuthorizationLevel,
 *   ManagedCertificateProfileCryptoPolicy, KeyType, SANElement, WebRAProfile).
 * - The v2 Go SDK's CertificateProfileAPI (evertrust/horizon-go v2, docs/CertificateProfileAPI.md @6fc5fe1):
 *   answers decode as CertificateProfileResponses, whose member for a webra profile is WebRAProfileResponse
 *   (docs/WebRAProfileResponse.md @013fc32 L7-L31, required keys checked by its UnmarshalJSON,
 *   models/model_web_ra_profile_response.go); nested models: docs/CertificateProfileAuthorizationLevels.md
 *   @6fc5fe1 L7-L29, AuthorizationLevel.md @46c9c95 L7-L8, RequestsPolicy.md @46c9c95 L7-L12,
 *   CertificateProfileSelfPermissions.md @6fc5fe1 L7-L13, ManagedCertificateProfileCryptoPolicy.md @18774e9
 *   L7-L20, CertificateTemplate.md @1071ea1 L7-L14, DNElement.md @46c9c95 L7-L13, SANElement.md @1071ea1
 *   L7-L13, LabelElement.md @46c9c95 L7-L15, OwnerPolicy.md @46c9c95 L7-L11, TeamPolicy.md @9bb7c7b L7-L14,
 *   ContactEmailPolicy.md @46c9c95 L7-L14; request bodies are WebRAProfile (docs/WebRAProfile.md @1071ea1
 *   L7-L25) through ToMap (required keys always written, NewCertificateProfileSelfPermissions and
 *   NewManagedCertificateProfileCryptoPolicy setting their false defaults).
 *
 * Known gaps (not exercised here):
 * - (closed) `description` and `displayName` are []LocalizedString as in Horizon (WebRAProfileResponse, v1 Go
 *   Profile.Description); a plain string sent is English (CertificateProfileAdd/Get below carry both).
 * - authorizationMode is answered `standard` (Certwright's name) for Horizon's `authorized`; `authorized` is
 *   accepted on input. Go reads it as a plain string, the MCP does not check it.
 * - Horizon-only profile keys other than the ones mapped here (autoRenewalPolicy, termsOfService, triggers,
 *   gradingPolicies, renewalPeriod, maxCertificatePerHolderPolicy, …) are refused as unknown
 *   fields (PRF-002 naming the field).
 */
import t, { type Test } from 'tap';
import { bootKernel, ENROLLMENT_BOOTSTRAP, TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { goDecodeErrors, GO_V2_JSON_CHECK, goPathEscape, type GoShape } from './go-shapes.js';
import { type Json, McpClient, expectOk, expectProblem, getStripMergePut, itemPath, normalizeItems } from './mcp-config-client.js';

const kernel = await bootKernel(t, ENROLLMENT_BOOTSTRAP);
const mcp = new McpClient(kernel);
await mcp.init();

// ---------------------------------------------------------------------------------------------------------
// What the clients accept.
// ---------------------------------------------------------------------------------------------------------
/** certificate-profiles.ts L84-L92: the keys the create tool requires (and Horizon answers). */
const MANDATORY_KEYS = ['module', 'name', 'enabled', 'authorizationLevels', 'requestsPolicy', 'selfPermissions', 'cryptoPolicy'];
/** schema.json $defs.AuthorizationLevel.accessLevel. */
const ACCESS_LEVELS = ['everyone', 'authenticated', 'authorized'];
/** schema.json $defs.KeyType (single key types). */
const KEY_TYPE = /^(rsa-(2048|3072|4096|8192)|ec-secp(256|384|521)r1|ec-brainpoolp(256|384|512)r1|ed-448|ed-25519|mldsa-(44|65|87))$/;
/** schema.json $defs.SANElement.type. */
const SAN_TYPES = ['RFC822NAME', 'DNSNAME', 'URI', 'IPADDRESS', 'OTHERNAME_UPN', 'OTHERNAME_GUID', 'REGISTERED_ID'];

const str = 'string' as const;
const int = 'int' as const;
const bool = 'bool' as const;
const localized: GoShape = { array: { object: { lang: str, value: str }, required: ['lang', 'value'] } };
const level: GoShape = { object: { accessLevel: str, enforcedIdentityProviders: { array: { object: { type: str, name: str }, required: ['type', 'name'] } } }, required: ['accessLevel'] };
const ACTIONS = ['enroll', 'enrollApi', 'requestEnroll', 'approveEnroll', 'revoke', 'requestRevoke', 'approveRevoke', 'search', 'update', 'requestUpdate', 'approveUpdate', 'recover', 'recoverApi', 'requestRecover', 'approveRecover', 'migrate', 'requestMigrate', 'approveMigrate', 'renew', 'renewApi', 'requestRenew', 'approveRenew', 'auditRequest'];
const authorizationLevels: GoShape = { object: Object.fromEntries(ACTIONS.map((a) => [a, level])), required: ['search', 'update', 'requestUpdate', 'approveUpdate'] };
const requestsPolicy: GoShape = { object: { enroll: str, migrate: str, recover: str, renew: str, revoke: str, update: str } };
const selfPermissions: GoShape = { object: { selfRecover: bool, selfUpdate: bool, selfRevoke: bool, selfRenew: bool, selfPopRenew: bool, selfPopRevoke: bool, selfPopUpdate: bool } };
const cryptoPolicy: GoShape = {
  object: {
    authorizedKeyTypes: { array: str },
    centralized: bool,
    decentralized: bool,
    defaultKeyType: str,
    escrow: bool,
    keyAvailability: str,
    p12passwordMode: str,
    p12passwordPolicy: str,
    p12storeEncryptionType: str,
    preferredEnrollmentMode: str,
    showP12OnEnroll: bool,
    showP12OnRecover: bool,
    showP12PasswordOnEnroll: bool,
    showP12PasswordOnRecover: bool,
  },
};
const dnElement: GoShape = { object: { computationRule: str, editableByApprover: bool, editableByRequester: bool, mandatory: bool, regex: str, type: str, value: str }, required: ['mandatory', 'type'] };
const sanElement: GoShape = { object: { computationRule: str, editableByApprover: bool, editableByRequester: bool, max: int, min: int, regex: str, type: str }, required: ['type'] };
const labelElement: GoShape = {
  object: { computationRule: str, editableByApprover: bool, editableByRequester: bool, enum: { array: str }, label: str, mandatory: bool, regex: str, suggestions: { array: str }, value: str },
  required: ['label'],
};
const ownerPolicy: GoShape = { object: { computationRule: str, description: localized, editableByApprover: bool, editableByRequester: bool, mandatory: bool }, required: ['editableByApprover', 'editableByRequester', 'mandatory'] };
const teamPolicy: GoShape = {
  object: { editableByRequester: bool, editableByApprover: bool, regex: str, whitelist: { array: str }, value: str, computationRule: str, mandatory: bool, description: localized },
  required: ['editableByRequester', 'editableByApprover', 'mandatory'],
};
const contactEmailPolicy: GoShape = {
  object: { computationRule: str, description: localized, editableByApprover: bool, editableByRequester: bool, mandatory: bool, regex: str, value: str, whitelist: { array: str } },
  required: ['mandatory'],
};
const certificateTemplate: GoShape = {
  // extensions and metadataPolicies ('any'): Certwright answers neither.
  object: { contactEmailPolicy, extensions: 'any', labels: { array: labelElement }, metadataPolicies: 'any', ownerPolicy, sans: { array: sanElement }, subject: { array: dnElement }, teamPolicy },
};
const webRAProfileResponse: GoShape = {
  object: {
    _id: str,
    authorizationLevels,
    authorizationMode: str,
    autoRenewalPolicy: 'any',
    certificateTemplate,
    constraints: 'any',
    cryptoPolicy,
    csrDataMapping: 'any',
    description: localized,
    displayName: localized,
    dsFlow: 'any',
    enabled: bool,
    gradingPolicies: { array: str },
    maxCertificatePerHolderPolicy: 'any',
    module: str,
    name: str,
    passwordPolicy: str,
    pkiConnector: str,
    renewalPeriod: str,
    requestsPolicy,
    selfPermissions,
    termsOfService: str,
    thirdPartyDiscoverySync: bool,
    triggers: 'any',
    validationRuleset: 'any',
  },
  required: ['_id', 'authorizationLevels', 'authorizationMode', 'certificateTemplate', 'cryptoPolicy', 'enabled', 'module', 'name', 'pkiConnector', 'requestsPolicy', 'selfPermissions'],
};

/** What the MCP's describe schema promises of the mandatory keys of an answer. */
function checkMcpShape(t: Test, p: Json, what: string): void {
  for (const key of MANDATORY_KEYS) t.ok(key in p, `${what}: ${key} is there (the update tool merges into it)`);
  for (const [action, l] of Object.entries((p.authorizationLevels ?? {}) as Record<string, Json>)) t.ok(ACCESS_LEVELS.includes(String(l.accessLevel)), `${what}: authorizationLevels.${action}.accessLevel ${String(l.accessLevel)}`);
  const crypto = (p.cryptoPolicy ?? {}) as Json;
  t.ok(['random', 'manual'].includes(String(crypto.p12passwordMode)), `${what}: cryptoPolicy.p12passwordMode ${String(crypto.p12passwordMode)} is random|manual`);
  t.ok(['centralized', 'decentralized'].includes(String(crypto.preferredEnrollmentMode)), `${what}: cryptoPolicy.preferredEnrollmentMode`);
  t.match(String(crypto.defaultKeyType), KEY_TYPE, `${what}: cryptoPolicy.defaultKeyType is a KeyType`);
  for (const k of (crypto.authorizedKeyTypes ?? []) as string[]) t.match(k, KEY_TYPE, `${what}: authorized key type ${k}`);
  for (const flag of Object.values((p.selfPermissions ?? {}) as Json)) t.type(flag, 'boolean');
  t.type(p.requestsPolicy, 'object');
}

// ---------------------------------------------------------------------------------------------------------
// MCP certificate-profiles.ts — SPEC L35-L45: /api/v1/certificate/profiles, strip [_id, tenant], PUT on the collection.
// ---------------------------------------------------------------------------------------------------------
const PROFILES = { routeCollection: '/api/v1/certificate/profiles', routeItem: '/api/v1/certificate/profiles/{name}', stripFields: ['_id', 'tenant'] } as const;

/** buildProfileBody (L217-L257) of a create call: config first, then the typed mandatory params. */
function mcpCreateBody(name: string, config: Json = {}, typed: Json = {}): Json {
  return {
    ...{
      pkiConnector: 'local-ca',
      authorizationMode: 'authorized',
      certificateTemplate: {
        subject: [
          { type: 'CN', mandatory: true, editableByRequester: true, regex: '^[a-z0-9.-]+$' },
          { type: 'OU', value: 'Web', mandatory: false, editableByRequester: false },
          { type: 'OU', mandatory: false, editableByRequester: true },
        ],
        sans: [{ type: 'DNSNAME', min: 1, max: 5, editableByRequester: true }],
        labels: [{ label: 'env', mandatory: true, editableByRequester: true }],
        ownerPolicy: { mandatory: false, editableByRequester: true, editableByApprover: false },
        contactEmailPolicy: { mandatory: true, editableByRequester: true },
      },
    },
    ...config,
    module: 'webra',
    name,
    enabled: true,
    authorizationLevels: { enroll: { accessLevel: 'authenticated' }, revoke: { accessLevel: 'authorized' }, search: { accessLevel: 'authorized' }, update: { accessLevel: 'authorized' }, requestUpdate: { accessLevel: 'authenticated' }, approveUpdate: { accessLevel: 'authorized' } },
    requestsPolicy: {},
    selfPermissions: {},
    cryptoPolicy: { defaultKeyType: 'rsa-2048', authorizedKeyTypes: ['rsa-2048', 'ec-secp256r1'], centralized: true, decentralized: true, escrow: false, p12passwordMode: 'random' },
    ...typed,
  };
}

t.test('create_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L84-L92,L217-L257,L380-L398', async (t) => {
  const res = await mcp.post('/api/v1/certificate/profiles', mcpCreateBody('mcp-horizon'));
  expectOk(t, res, 'POST /api/v1/certificate/profiles');
  const p = (res.body ?? {}) as Json;
  checkMcpShape(t, p, 'the create answer');
  t.match(p, {
    name: 'mcp-horizon',
    module: 'webra',
    enabled: true,
    pkiConnector: 'local-ca',
    authorizationMode: 'standard',
    authorizationLevels: { enroll: { accessLevel: 'authenticated' }, enrollApi: { accessLevel: 'authenticated' }, revoke: { accessLevel: 'authorized' }, requestUpdate: { accessLevel: 'authenticated' } },
    cryptoPolicy: { defaultKeyType: 'rsa-2048', authorizedKeyTypes: ['rsa-2048', 'ec-secp256r1'], centralized: true, decentralized: true, escrow: false, p12passwordMode: 'random' },
    certificateTemplate: {
      subject: [{ type: 'CN', mandatory: true, editableByRequester: true, regex: '^[a-z0-9.-]+$' }, { type: 'OU', value: 'Web', editableByRequester: false }, { type: 'OU', editableByRequester: true }],
      sans: [{ type: 'DNSNAME', min: 1, max: 5, editableByRequester: true }],
      labels: [{ label: 'env', mandatory: true, editableByRequester: true }],
      contactEmailPolicy: { mandatory: true },
    },
  });
  // The same profile in Certwright's own form (what the request workflows use).
  t.match(p, {
    keyPolicy: { defaultKeyType: 'rsa-2048', authorizedKeyTypes: ['rsa-2048', 'ec-secp256r1'], p12passwordMode: 'generated' },
    authorizations: { workflows: { enroll: { direct: ['*'] }, update: { request: ['*'] } }, approve: [] },
    subject: [{ element: 'cn.1', mandatory: true }, { element: 'ou.1', value: 'Web', editable: false }, { element: 'ou.2', editable: true }],
    sans: [{ type: 'DNSNAME', min: 1, max: 5 }],
    contactEmail: { mandatory: true },
  });

  const again = await mcp.post('/api/v1/certificate/profiles', mcpCreateBody('mcp-horizon'));
  expectProblem(t, again, 'the same profile twice', { status: [400, 409], suffix: '004' });
});

t.test('create_certificate_profile, settings Certwright refuses — horizon-mcp src/tools/config/certificate-profiles.ts:L217-L257,L380-L398', async (t) => {
  const cases: [string, Json, RegExp][] = [
    ['anonymous enrollment', mcpCreateBody('mcp-bad', {}, { authorizationLevels: { enroll: { accessLevel: 'everyone' } } }), /authorizationLevels\.enroll/],
    ['a key type Certwright does not issue', mcpCreateBody('mcp-bad', {}, { cryptoPolicy: { authorizedKeyTypes: ['rsa-8192'] } }), /cryptoPolicy\/authorizedKeyTypes/],
    ['self-service revocation', mcpCreateBody('mcp-bad', {}, { selfPermissions: { selfRevoke: true } }), /selfPermissions\.selfRevoke/],
    ['a request lifetime', mcpCreateBody('mcp-bad', {}, { requestsPolicy: { enroll: '7 days' } }), /requestsPolicy\.enroll/],
    ['auto-validation', mcpCreateBody('mcp-bad', { authorizationMode: 'auto-validation' }), /authorizationMode/],
    ['a computation rule that does not parse', mcpCreateBody('mcp-bad', { certificateTemplate: { subject: [{ type: 'CN', mandatory: true, computationRule: '{{csr.subject.cn' }] } }), /subject\[0\] \(cn\.1\)\.computationRule/],
    ['an approver editing', mcpCreateBody('mcp-bad', { certificateTemplate: { sans: [{ type: 'DNSNAME', editableByApprover: true }] } }), /sans\[0\]\.editableByApprover/],
    // auto_renewal_policy (typed param, L243-L244) lands at the top level as autoRenewalPolicy.
    ['autoRenewalPolicy', mcpCreateBody('mcp-bad', {}, { autoRenewalPolicy: { default: true, editable: true } }), /autoRenewalPolicy/],
  ];
  for (const [what, body, detail] of cases) {
    const res = await mcp.post('/api/v1/certificate/profiles', body);
    const problem = expectProblem(t, res, what, { status: 400, suffix: '002' });
    t.match(problem.detail, detail, `${what}: the detail names the field`);
  }
  expectProblem(t, await mcp.get(itemPath(PROFILES.routeItem, 'mcp-bad')), 'nothing was created', { status: 404, suffix: '003' });
});

t.test('create_certificate_profile with a computation rule — horizon-mcp certificate-profiles.ts computationRule', async (t) => {
  const res = await mcp.post('/api/v1/certificate/profiles', mcpCreateBody('mcp-rule', { certificateTemplate: { subject: [{ type: 'CN', mandatory: true, editableByRequester: false, computationRule: 'Lower({{csr.subject.cn}})' }] } }));
  expectOk(t, res, 'a profile with a computation rule', [200, 201]);
  const got = await mcp.get(itemPath(PROFILES.routeItem, 'mcp-rule'));
  const subject = ((got.body as Json).certificateTemplate as Json).subject as Json[];
  t.equal(subject[0]!.computationRule, 'Lower({{csr.subject.cn}})', 'answered as sent');
  checkMcpShape(t, got.body as Json, 'profile mcp-rule');
});

t.test('list_certificate_profiles — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L374-L378', async (t) => {
  const res = await mcp.get('/api/v1/certificate/profiles');
  expectOk(t, res, 'GET /api/v1/certificate/profiles', [200]);
  const items = normalizeItems(res.body);
  t.ok(items.some((p) => p.name === 'mcp-horizon'), 'the created profile is listed by name');
  for (const p of items) {
    t.type(p.name, 'string', 'name_contains filters on a string name');
    checkMcpShape(t, p, `profile ${String(p.name)}`);
  }
});

t.test('get_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L374-L378', async (t) => {
  const res = await mcp.get(itemPath(PROFILES.routeItem, 'mcp-horizon'));
  expectOk(t, res, 'GET one profile', [200]);
  const p = (res.body ?? {}) as Json;
  t.notOk(Array.isArray(res.body), 'one object');
  checkMcpShape(t, p, 'the profile');
  for (const san of ((p.certificateTemplate as Json).sans ?? []) as Json[]) t.ok(SAN_TYPES.includes(String(san.type)), `SAN type ${String(san.type)} is one of SANElement.type`);
  t.same(p.selfPermissions, { selfRecover: false, selfUpdate: false, selfRevoke: false, selfRenew: false, selfPopRenew: false, selfPopRevoke: false, selfPopUpdate: false });
  t.same(p.requestsPolicy, {}, "no request lifetime: Certwright's pending requests do not expire");
});

t.test('update_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L217-L257,L400-L412 (+ _scaffold.ts getStripMergePutExplicit)', async (t) => {
  const before = (await mcp.get(itemPath(PROFILES.routeItem, 'mcp-horizon'))).body as Json;
  // crypto_policy and authorization_levels given: buildProfileBody(rest) puts them at the top level.
  const { res } = await getStripMergePut(t, mcp, PROFILES, 'mcp-horizon', {
    authorizationLevels: { enroll: { accessLevel: 'authorized' }, requestEnroll: { accessLevel: 'authenticated' }, approveEnroll: { accessLevel: 'authenticated' } },
    cryptoPolicy: { authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1'], centralized: true, decentralized: false, escrow: true, p12passwordMode: 'manual' },
  });
  expectOk(t, res, 'PUT /api/v1/certificate/profiles', [200]);
  const after = (await mcp.get(itemPath(PROFILES.routeItem, 'mcp-horizon'))).body as Json;
  t.match(after.cryptoPolicy, { authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1'], defaultKeyType: 'ec-secp256r1', centralized: true, decentralized: false, preferredEnrollmentMode: 'centralized', escrow: true, p12passwordMode: 'manual' });
  t.match(after.keyPolicy, { authorizedKeyTypes: ['ec-secp256r1', 'ec-secp384r1'], defaultKeyType: 'ec-secp256r1', decentralized: false, escrow: true, p12passwordMode: 'manual' });
  t.match(after.authorizationLevels, { enroll: { accessLevel: 'authorized' }, requestEnroll: { accessLevel: 'authenticated' }, approveEnroll: { accessLevel: 'authenticated' }, approveRevoke: { accessLevel: 'authenticated' }, requestUpdate: { accessLevel: 'authenticated' } });
  t.same((after.authorizations as Json).approve, ['*']);
  const changed = new Set(['cryptoPolicy', 'keyPolicy', 'authorizationLevels', 'authorizations', 'version', 'updatedAt']);
  for (const key of Object.keys(before)) if (!changed.has(key)) t.same(after[key], before[key], `${key} is unchanged`);

  // A template part through config (certificateTemplate): the other parts stay as they were.
  const subject = [{ type: 'CN', mandatory: true, editableByRequester: true }, { type: 'O', value: 'Acme', mandatory: true, editableByRequester: false }];
  const second = await getStripMergePut(t, mcp, PROFILES, 'mcp-horizon', { certificateTemplate: { subject } });
  expectOk(t, second.res, 'PUT with a new subject', [200]);
  const last = (await mcp.get(itemPath(PROFILES.routeItem, 'mcp-horizon'))).body as Json;
  // What an element leaves out (the CN's regex) is kept from the element it replaces.
  t.match((last.certificateTemplate as Json).subject, [{ type: 'CN', regex: '^[a-z0-9.-]+$' }, { type: 'O', value: 'Acme', editableByRequester: false }]);
  t.match(last.subject, [{ element: 'cn.1' }, { element: 'o.1', value: 'Acme', editable: false, mandatory: true }]);
  for (const key of ['sans', 'labels', 'owner', 'team', 'contactEmail', 'keyPolicy', 'authorizations']) t.same(last[key], after[key], `${key} is unchanged`);

  // Nothing asked: the GET answer PUT back as it is changes nothing but the version.
  const echo = await getStripMergePut(t, mcp, PROFILES, 'mcp-horizon', {});
  expectOk(t, echo.res, 'PUT of the GET answer', [200]);
  const { version: _v, updatedAt: _u, ...same } = echo.current;
  t.match(echo.res.body, same, 'the answer is what GET answered');
});

t.test('delete_certificate_profile — horizon-mcp src/tools/config/certificate-profiles.ts:L35-L45,L414-L420', async (t) => {
  const res = await mcp.delete(itemPath(PROFILES.routeItem, 'mcp-horizon'));
  t.ok(res.status === 204 || res.status === 200, `DELETE answered ${res.status}`);
  expectProblem(t, await mcp.get(itemPath(PROFILES.routeItem, 'mcp-horizon')), 'GET after the delete', { status: 404, suffix: '003' });
  expectProblem(t, await mcp.delete(itemPath(PROFILES.routeItem, 'mcp-horizon')), 'a second delete', { status: 404, suffix: '003' });
});

t.test('both forms of a part in one body (Certwright rule: they must agree unless one repeats the stored profile)', async (t) => {
  const disagree = await mcp.post('/api/v1/certificate/profiles', { ...mcpCreateBody('mcp-both'), keyPolicy: { escrow: true } });
  const problem = expectProblem(t, disagree, 'cryptoPolicy.escrow false, keyPolicy.escrow true', { status: 400, suffix: '002' });
  t.match(problem.detail, /cryptoPolicy and keyPolicy disagree/);
  // A form sent is the whole part (what it leaves out takes its default), so both must say all of it alike.
  const agree = await mcp.post('/api/v1/certificate/profiles', { ...mcpCreateBody('mcp-both'), keyPolicy: { escrow: false, defaultKeyType: 'rsa-2048', authorizedKeyTypes: ['rsa-2048', 'ec-secp256r1'] } });
  expectOk(t, agree, 'both forms saying the same');
  const current = agree.body as Json;
  const edited = await mcp.put('/api/v1/certificate/profiles', { ...current, keyPolicy: { ...(current.keyPolicy as Json), escrow: true }, cryptoPolicy: { ...(current.cryptoPolicy as Json), escrow: false, centralized: false } });
  const both = expectProblem(t, edited, 'a PUT editing both forms differently', { status: 400, suffix: '002' });
  t.match(both.detail, /cryptoPolicy and keyPolicy disagree/);

  // A copy of another profile's answer, one form edited: the form repeating the stored profile gives way.
  const { _id: _drop, ...copy } = (await mcp.get(itemPath(PROFILES.routeItem, 'default'))).body as Json;
  const horizonEdited = await mcp.post('/api/v1/certificate/profiles', { ...copy, name: 'mcp-copy-h', cryptoPolicy: { ...(copy.cryptoPolicy as Json), escrow: true, centralized: true } });
  expectOk(t, horizonEdited, 'a copy with its cryptoPolicy edited');
  t.match(horizonEdited.body, { keyPolicy: { escrow: true }, cryptoPolicy: { escrow: true } });
  const certwrightEdited = await mcp.post('/api/v1/certificate/profiles', { ...copy, name: 'mcp-copy-c', keyPolicy: { ...(copy.keyPolicy as Json), escrow: true, centralized: true } });
  expectOk(t, certwrightEdited, 'a copy with its keyPolicy edited');
  t.match(certwrightEdited.body, { keyPolicy: { escrow: true }, cryptoPolicy: { escrow: true } });
});

// ---------------------------------------------------------------------------------------------------------
// v2 Go CertificateProfileAPI (docs/CertificateProfileAPI.md @6fc5fe1).
// ---------------------------------------------------------------------------------------------------------
type Res = { statusCode: number; headers: Record<string, unknown>; body: string };
/** An operation with a return type: Accept application/json, Content-Type only with a body (client.go). */
async function v2(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Res> {
  const headers = { host: 'localhost', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), Accept: 'application/json', 'X-API-KEY': TEST_ADMIN_SECRET, 'X-API-ID': 'administrator', 'User-Agent': 'OpenAPI-Generator/1.0.0/go' };
  return kernel.app.inject({ method, url: path, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}
function v2Ok(t: Test, res: Res): Json {
  t.ok(res.statusCode < 300, `status ${res.statusCode} is a success for v2 (< 300): ${res.body.slice(0, 300)}`);
  t.match(String(res.headers['content-type']), GO_V2_JSON_CHECK, 'Content-Type matches JsonCheck');
  return JSON.parse(res.body) as Json;
}

/** A WebRAProfile as ToMap writes it (keys sorted by json.Marshal), crypto policy set beside its false defaults. */
function goWebRAProfile(name: string, overrides: Json = {}): Json {
  const authorized = { accessLevel: 'authorized' };
  return {
    authorizationLevels: { approveUpdate: authorized, enroll: { accessLevel: 'authenticated' }, requestUpdate: authorized, search: authorized, update: authorized },
    authorizationMode: 'authorized',
    certificateTemplate: { sans: [{ editableByRequester: true, max: 3, min: 1, type: 'DNSNAME' }], subject: [{ editableByRequester: true, mandatory: true, type: 'CN' }] },
    cryptoPolicy: { authorizedKeyTypes: ['ec-secp256r1'], centralized: false, decentralized: true, defaultKeyType: 'ec-secp256r1', escrow: false },
    enabled: true,
    module: 'webra',
    name,
    pkiConnector: 'local-ca',
    requestsPolicy: {},
    selfPermissions: { selfPopRenew: false, selfPopRevoke: false, selfPopUpdate: false, selfRecover: false, selfRenew: false, selfRevoke: false, selfUpdate: false },
    ...overrides,
  };
}

t.test('CertificateProfileAPI.CertificateProfileGet — horizon-go docs/CertificateProfileAPI.md:L149-L216 (CertificateProfileResponses → WebRAProfileResponse docs/WebRAProfileResponse.md:L7-L31)', async (t) => {
  // A profile written in Certwright's form, with what Horizon's form has to carry: repeated OUs, named principals, a label.
  const made = await v2('POST', '/api/v1/certificate/profiles', {
    name: 'v2-get',
    pkiConnector: 'local-ca',
    description: 'Web servers',
    subject: [{ element: 'cn.1', mandatory: true }, { element: 'ou.1', value: 'Ops', editable: false }, { element: 'ou.2' }],
    labels: [{ label: 'env', mandatory: true }],
    keyPolicy: { p12passwordMode: 'manual', passwordPolicy: 'Default' },
    authorizations: { workflows: { enroll: { direct: ['alice', '*'] }, revoke: { request: ['team:ops'] } }, approve: ['role:approver'] },
  });
  t.equal(made.statusCode, 201, made.body);
  for (const name of ['v2-get', 'default']) {
    const body = v2Ok(t, await v2('GET', `/api/v1/certificate/profiles/${goPathEscape(name)}`));
    t.same(goDecodeErrors(body, webRAProfileResponse), [], `${name}: decodes as WebRAProfileResponse`);
    t.equal(body.module, 'webra');
    t.equal(body.name, name);
  }
  const body = v2Ok(t, await v2('GET', `/api/v1/certificate/profiles/${goPathEscape('v2-get')}`));
  t.match(body.authorizationLevels, { enroll: { accessLevel: 'authenticated' }, requestRevoke: { accessLevel: 'authorized' }, approveEnroll: { accessLevel: 'authorized' }, search: { accessLevel: 'authorized' } });
  t.match(body.certificateTemplate, {
    subject: [{ type: 'CN', mandatory: true }, { type: 'OU', value: 'Ops', editableByRequester: false }, { type: 'OU', editableByRequester: true }],
    labels: [{ label: 'env', mandatory: true }],
    ownerPolicy: { mandatory: false, editableByRequester: true, editableByApprover: false },
  });
  t.match(body.cryptoPolicy, { p12passwordMode: 'manual', p12passwordPolicy: 'Default', p12storeEncryptionType: 'AES' });
  t.same(body.description, [{ lang: 'en', value: 'Web servers' }], 'a plain-string description is answered as English LocalizedString');
});

t.test('CertificateProfileAPI.CertificateProfileList — horizon-go docs/CertificateProfileAPI.md:L219-L282 ([]CertificateProfileResponses)', async (t) => {
  const body = v2Ok(t, await v2('GET', '/api/v1/certificate/profiles'));
  t.ok(Array.isArray(body), 'an array');
  t.same(goDecodeErrors(body, { array: webRAProfileResponse }), [], 'every profile decodes as WebRAProfileResponse');
  t.ok((body as unknown as Json[]).some((p) => p.name === 'default'), 'the bootstrap profile is listed');
});

t.test('CertificateProfileAPI.CertificateProfileAdd — horizon-go docs/CertificateProfileAPI.md:L15-L78 (WebRAProfile docs/WebRAProfile.md:L7-L25 → CertificateProfileResponses)', async (t) => {
  const localized = { description: [{ lang: 'en', value: 'Added by v2' }, { lang: 'fr', value: 'Ajouté par v2' }], displayName: [{ lang: 'en', value: 'V2 add' }] };
  const body = v2Ok(t, await v2('POST', '/api/v1/certificate/profiles', goWebRAProfile('v2-add', localized)));
  t.same(goDecodeErrors(body, webRAProfileResponse), [], 'decodes as WebRAProfileResponse');
  t.match(body, localized, 'description and displayName kept as sent');
  t.match(body, { name: 'v2-add', enabled: true, authorizationLevels: { enroll: { accessLevel: 'authenticated' } }, cryptoPolicy: { centralized: false, decentralized: true, preferredEnrollmentMode: 'decentralized', authorizedKeyTypes: ['ec-secp256r1'] } });
  t.match(body.certificateTemplate, { sans: [{ type: 'DNSNAME', min: 1, max: 3 }], subject: [{ type: 'CN', mandatory: true }] });
});

t.test('CertificateProfileAPI.CertificateProfileUpdate — horizon-go docs/CertificateProfileAPI.md:L285-L348 (PUT WebRAProfile, the profile named in the body)', async (t) => {
  const cryptoPolicy = { authorizedKeyTypes: ['rsa-3072'], centralized: true, decentralized: false, defaultKeyType: 'rsa-3072', escrow: true, p12passwordMode: 'random' };
  const body = v2Ok(t, await v2('PUT', '/api/v1/certificate/profiles', goWebRAProfile('v2-add', { cryptoPolicy, enabled: false })));
  t.same(goDecodeErrors(body, webRAProfileResponse), [], 'decodes as WebRAProfileResponse');
  t.match(body, { name: 'v2-add', enabled: false, cryptoPolicy: { ...cryptoPolicy, preferredEnrollmentMode: 'centralized' }, keyPolicy: { escrow: true, defaultKeyType: 'rsa-3072' } });
});
