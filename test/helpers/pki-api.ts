import type { Kernel } from '../../core/kernel.js';
import { pkiServices, type PkiServices } from '../../core/pki/cas/services.js';
import { ADMIN_HEADERS } from './kernel.js';

/** The kernel's own PKI services (the same instances its routes use). */
export function servicesOf(kernel: Kernel): PkiServices {
  return pkiServices({ knex: kernel.db.knex, clock: () => Date.now(), events: kernel.events, logger: kernel.logger, scheduler: kernel.scheduler });
}

/** Imports a CA through the API as the administrator; fails the test's expectations loudly when refused. */
export async function importCa(kernel: Kernel, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await kernel.app.inject({
    method: 'POST',
    url: '/api/v1/cas/',
    headers: { host: 'localhost', 'content-type': 'application/json', ...ADMIN_HEADERS },
    payload: JSON.stringify(body),
  });
  if (res.statusCode !== 201) throw new Error(`importing CA ${String(body.name)}: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, unknown>;
}
