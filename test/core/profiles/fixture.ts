import type { Kernel } from '../../../core/kernel.js';
import { newId } from '../../../core/db/ids.js';
import type { Profiles } from '../../../core/profiles/service.js';
import { ADMIN_HEADERS, bootKernel, type TestContext } from '../../helpers/kernel.js';

export const URL = '/api/v1/certificate/profiles/';

/**
 * A kernel without the first-start local CA (the tests name their own connectors), and its profile service.
 * Connectors are rows of migration 0014's `pki_connectors` written straight to the table: a profile only
 * checks that its connector exists; nothing here issues.
 */
export async function bootProfiles(t: TestContext): Promise<{ kernel: Kernel; profiles: Profiles }> {
  const kernel = await bootKernel(t, { pki: { bootstrap: { localCa: false } } });
  const profiles = (kernel.container.resolve('enrollment') as { profiles: Profiles }).profiles;
  return { kernel, profiles };
}

/** A connector row of type `fake-connector` (no plugin behind it: profiles only look its name up). */
export async function fakeConnector(kernel: Kernel, name: string, tenant = 'default'): Promise<void> {
  const now = Date.now();
  await kernel.db.knex('pki_connectors').insert({ id: newId(now), tenant, name, type: 'fake-connector', description: null, enabled: true, queue: 'default', configuration: '{}', version: 1, created_at: now, updated_at: now });
}

export function admin(kernel: Kernel) {
  return (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    kernel.app.inject({ method, url, headers: ADMIN_HEADERS, ...(payload !== undefined ? { payload: payload as object } : {}) });
}
