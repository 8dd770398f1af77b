import type { Kernel } from '../../../../core/kernel.js';
import { ADMIN_HEADERS, bootKernel, type TestContext } from '../../../helpers/kernel.js';
import { caller } from '../../../helpers/security.js';

export const SCIM_TYPE = 'application/scim+json';
export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PROFILES = '/api/v1/security/scim/profiles/';

/** A kernel on the test database; the administrator's API caller. */
export async function scimKernel(t: TestContext, overrides: Parameters<typeof bootKernel>[1] = {}) {
  const kernel = await bootKernel(t, overrides);
  return { kernel, admin: caller(kernel, ADMIN_HEADERS) };
}

/** A raw credential holding `token` and a SCIM profile bound to it, created through the API. */
export async function createProfile(admin: ReturnType<typeof caller>, name: string, token: string, extra: Record<string, unknown> = {}): Promise<void> {
  const credential = await admin('POST', '/api/v1/security/credentials/', { name: `${name}-token`, type: 'raw', secret: { value: token } });
  if (credential.statusCode !== 201) throw new Error(`credential: ${credential.statusCode} ${credential.body}`);
  const profile = await admin('POST', PROFILES, { name, token: `${name}-token`, ...extra });
  if (profile.statusCode !== 201) throw new Error(`profile: ${profile.statusCode} ${profile.body}`);
}

/** Calls /security/scim/<profile><path> with the bearer token, bodies as application/scim+json. */
export function scimClient(kernel: Kernel, profile: string, token: string | null, host = 'localhost') {
  return (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, payload?: unknown, headers: Record<string, string> = {}) =>
    kernel.app.inject({
      method,
      url: `/security/scim/${profile}${path}`,
      headers: {
        host,
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(payload === undefined ? {} : { 'content-type': SCIM_TYPE }),
        ...headers,
      },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });
}

/** The principal information of `identifier` as the platform's own API answers it (null: 404). */
export async function principalInfo(admin: ReturnType<typeof caller>, identifier: string): Promise<Record<string, unknown> | null> {
  const res = await admin('GET', `/api/v1/security/principalinfos/${encodeURIComponent(identifier)}`);
  if (res.statusCode === 404) return null;
  if (res.statusCode !== 200) throw new Error(`principalinfos: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}

/** Identifiers of a team's (or role's) members through the platform's API. */
export async function members(admin: ReturnType<typeof caller>, kind: 'teams' | 'roles', name: string): Promise<string[]> {
  const res = await admin('GET', `/api/v1/security/${kind}/${name}/members`);
  if (res.statusCode !== 200) throw new Error(`members: ${res.statusCode} ${res.body}`);
  return (res.json() as { identifier: string }[]).map((m) => m.identifier).sort();
}
