/**
 * The vendor's v1 Go SDK (evertrust/horizon-go v1) as the contract tests replay it: its transport
 * (http/client.go @041e01a: Go's net/http client with its default User-Agent and no Accept header; resty sets
 * `Content-Type: application/json` on every call, GET included; success is status <= 300, @cc4f36d
 * L48-L81) and the Go structs its answers decode into (certificates.go @419f869, requests.go @3c83a0b),
 * shared by go-v1.test.ts and go-v1-workflows.test.ts.
 */
import type { Test } from 'tap';
import type { Kernel } from '../../core/kernel.js';
import { TEST_ADMIN_SECRET } from '../helpers/kernel.js';
import { csrFor } from '../helpers/csr.js';
import { goDecodeErrors, type GoShape } from './go-shapes.js';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type V1Answer = { statusCode: number; body: string; headers: Record<string, unknown>; json: () => any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export const v1Headers = (id = 'administrator', key = TEST_ADMIN_SECRET): Record<string, string> => ({
  'User-Agent': 'Go-http-client/1.1',
  'Content-Type': 'application/json',
  'X-API-ID': id,
  'X-API-KEY': key,
});

/** A request as the SDK sends it, to the kernel's fastify instance. */
export function v1Client(kernel: Kernel) {
  return async (method: 'GET' | 'POST', path: string, body?: string, headers = v1Headers()): Promise<V1Answer> =>
    kernel.app.inject({ method, url: path, headers: { host: 'localhost', ...headers }, ...(body === undefined ? {} : { payload: body }) }) as Promise<V1Answer>;
}

/** http/client.go @cc4f36d L48-L81: a status above 300 is an error; below, the body is decoded. */
export const v1Success = (status: number): boolean => status <= 300;

/** The zero-valued int64 fields json.Marshal always writes for every v1 request struct (no omitempty). */
export const ZERO_DATES = { registrationDate: 0, lastModificationDate: 0, expirationDate: 0, removeAt: 0 };

// ---- Go struct shapes (what encoding/json accepts) -------------------------------------------------------
export const str = 'string' as const;
export const int = 'int' as const;
export const bool = 'bool' as const;
export const kv: GoShape = { array: { object: { key: str, value: str } } };
/** certificates.go @419f869 L109-L142 (Certificate). */
export const v1Certificate: GoShape = {
  object: {
    _id: str, module: str, profile: str, owner: str, team: str, contactEmail: str, certificate: str, thumbprint: str, selfSigned: bool,
    publicKeyThumbprint: str, dn: str, serial: str, issuer: str, notBefore: int, notAfter: int, revocationDate: int, revocationReason: str,
    keyType: str, signingAlgorithm: str, revoked: bool,
    thirdPartyData: { array: { object: { connector: str, id: str, fingerprint: str, pushDate: int, removeDate: int } } },
    triggerResults: { array: { object: { name: str, event: str, triggerType: str, lastExecutionDate: int, status: str, detail: str, retryable: bool } } },
    discoveryData: { array: { object: { paths: { array: str }, usages: { array: str }, operatingSystems: { array: str }, hostnames: { array: str }, ip: str, sources: { array: str }, tlsPorts: { array: { object: { port: int, version: str } } } } } },
    discoveryInfo: { array: { object: { campaign: str, lastDiscoveryDate: int, identifier: str } } },
    discoveryTrusted: bool, labels: kv,
    subjectAlternateNames: { array: { object: { sanType: str, value: str } } },
    metadata: kv, holderId: str,
  },
};
/** requests.go @3c83a0b L145-L157 (Capabilities). */
export const v1Capabilities: GoShape = {
  object: { centralized: bool, decentralized: bool, preferredEnrollmentMode: str, defaultKeyType: str, authorizedKeyTypes: { array: str }, escrow: bool, showP12PasswordOnEnroll: bool, showP12OnEnroll: bool, showP12PasswordOnRecover: bool, showP12OnRecover: bool, p12PasswordMode: str },
};
/**
 * requests.go @3c83a0b L192-L219 (WebRAEnrollRequest); the other workflows' request structs (WebRARevokeRequest,
 * WebRAMigrateRequest, WebRARecoverRequest, WebRAImportRequest, WebRARenewRequest, WebRAUpdateRequest) differ
 * only in `template` (WebRARecoverRequest has none: an unknown key, ignored).
 */
export const v1Request = (template: GoShape): GoShape => ({
  object: {
    _id: str, workflow: str, module: str, status: str, profile: str, dn: str, requester: str, approver: str, contact: str, requesterComment: str,
    approverComment: str, registrationDate: int, lastModificationDate: int, expirationDate: int, removeAt: int, template, certificatePem: str,
    certificateId: str, certificate: v1Certificate, pkcs12: { object: { value: str } }, password: { object: { value: str } }, labels: kv,
    metadata: kv, holderId: str, globalHolderIdCount: int, profileHolderIdCount: int,
  },
});

/** What requests/client.go does with every request answer: decode into the struct, then EnsureType (requests.go L221-L229). */
export function checkV1Request(t: Test, res: { statusCode: number; body: string }, workflow: string, template: GoShape): Json {
  t.ok(v1Success(res.statusCode), `status ${res.statusCode} is a success for v1 (<= 300): ${res.body.slice(0, 300)}`);
  const body = JSON.parse(res.body) as Json;
  t.same(goDecodeErrors(body, v1Request(template)), [], 'decodes into the v1 request struct');
  t.equal(body.module, 'webra', 'EnsureType: module is webra');
  t.equal(body.workflow, workflow, `EnsureType: workflow is ${workflow}`);
  return body;
}

/** Enrolls a certificate the way the v1 SDK does (submit with a CSR), for the tests that need one. */
export async function v1Enrolled(kernel: Kernel, cn: string, profile = 'default'): Promise<Json> {
  const res = await v1Client(kernel)('POST', '/api/v1/requests/submit', JSON.stringify({ workflow: 'enroll', module: 'webra', profile, ...ZERO_DATES, template: { csr: csrFor(cn, [cn]) } }));
  if (res.statusCode > 300) throw new Error(`enroll ${cn}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body) as Json;
}
