import type { Kernel } from '../../core/kernel.js';
import { newId } from '../../core/db/ids.js';
import type { Permission } from '../../core/security/permissions/permission-set.js';

export { ADMIN_HEADERS, TEST_ADMIN_SECRET } from './kernel.js';

export interface TestPrincipal {
  identifier: string;
  secret: string;
  /** X-API-ID / X-API-KEY headers of the principal. */
  headers: Record<string, string>;
}

/**
 * A local account with the given permissions, roles and team memberships, written straight to the
 * database (tests of one API should not depend on another's), with API-key headers to call as it.
 * Roles and teams named here must exist for their permissions / objects to apply.
 */
export async function createPrincipal(
  kernel: Kernel,
  identifier: string,
  options: { permissions?: Permission[]; roles?: string[]; teams?: { name: string; manager?: boolean }[]; secret?: string; email?: string } = {},
): Promise<TestPrincipal> {
  const tenant = 'default';
  const secret = options.secret ?? `Secret-of-${identifier}-1!`;
  const { security, db } = kernel;
  await security.identities.insert(tenant, { identifier, name: identifier, email: options.email ?? null, enabled: true }, await security.hasher.hash(secret));
  const now = Date.now();
  await db.knex('security_principal_infos').insert({
    id: newId(now),
    tenant,
    identifier,
    name: identifier,
    email: options.email ?? null,
    permissions: JSON.stringify(options.permissions ?? []),
    preferences: '{}',
    created_at: now,
    updated_at: now,
  });
  for (const role of options.roles ?? []) {
    await db.knex('security_memberships').insert({ tenant, kind: 'role', group_name: role, identifier, manager: false });
  }
  for (const team of options.teams ?? []) {
    await db.knex('security_memberships').insert({ tenant, kind: 'team', group_name: team.name, identifier, manager: team.manager ?? false });
  }
  security.invalidate();
  return { identifier, secret, headers: { 'x-api-id': identifier, 'x-api-key': secret } };
}

/** Logs in (GET /authenticate) and returns the cookie header and the csrf token to echo. */
export async function login(kernel: Kernel, headers: Record<string, string>): Promise<{ cookie: string; csrf: string }> {
  const res = await kernel.app.inject({ url: '/api/v1/security/principals/authenticate', headers });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const pairs = setCookie.map((c) => c.split(';')[0]!);
  const csrf = pairs.find((p) => p.startsWith('csrf-token='))!.slice('csrf-token='.length);
  return { cookie: pairs.join('; '), csrf };
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** Calls the API as the principal with `headers`; a string payload is sent as is (malformed JSON). */
export const caller =
  (kernel: Kernel, headers: Record<string, string>) =>
  (method: Method, url: string, payload?: unknown) =>
    kernel.app.inject({
      method,
      url,
      headers: { host: 'localhost', ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });
