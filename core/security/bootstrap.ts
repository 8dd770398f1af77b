import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { newId } from '../db/ids.js';
import { isUniqueViolation } from '../db/unique.js';
import type { PasswordHasher } from './passwords/hasher.js';
import { DEFAULT_POLICY, generatePassword, passwordProblems } from './password-policies/policy.js';
import type { LocalIdentityRepository } from './store/local-identities.js';

export const ADMIN_IDENTIFIER = 'administrator';
export const INITIAL_ADMIN_FILE = 'initial-admin.json';

export interface AdminBootstrapDeps {
  knex: Knex;
  identities: LocalIdentityRepository;
  hasher: PasswordHasher;
  logger: Logger;
  dataDir: string;
  clock: () => number;
}

/**
 * First start with an empty database: the local account `administrator`, holding every permission
 * (`*`). Its secret is CERTWRIGHT_ADMIN_SECRET (security.adminSecret) or, when unset, generated from the
 * Default policy, printed once to the log and written to <dataDir>/initial-admin.json (mode 0600).
 * Two nodes starting together: the unique identifier lets one create it; the other finds it.
 */
export async function ensureInitialAdministrator(tenant: string, configuredSecret: string | null, deps: AdminBootstrapDeps): Promise<void> {
  if ((await deps.identities.count(tenant)) > 0) return;
  if (configuredSecret !== null) {
    const problems = passwordProblems(DEFAULT_POLICY, configuredSecret);
    if (problems.length > 0) {
      throw new Error(`CERTWRIGHT_ADMIN_SECRET (security.adminSecret) does not satisfy the Default password policy: it needs ${problems.join(', ')}`);
    }
  }
  const secret = configuredSecret ?? generatePassword({ ...DEFAULT_POLICY, minChar: 24 });
  const hash = await deps.hasher.hash(secret);
  try {
    await deps.identities.insert(tenant, { identifier: ADMIN_IDENTIFIER, name: 'Administrator', email: null, enabled: true }, hash);
  } catch (err) {
    if (isUniqueViolation(err)) return;
    throw err;
  }
  const now = deps.clock();
  await deps.knex('security_principal_infos')
    .insert({
      id: newId(now),
      tenant,
      identifier: ADMIN_IDENTIFIER,
      name: 'Administrator',
      email: null,
      permissions: JSON.stringify([{ value: '*' }]),
      preferences: '{}',
      created_at: now,
      updated_at: now,
    })
    .onConflict(['tenant', 'identifier'])
    .merge({ permissions: JSON.stringify([{ value: '*' }]), updated_at: now });
  if (configuredSecret !== null) {
    deps.logger.info({ identifier: ADMIN_IDENTIFIER }, 'created the local account "administrator" with the secret from CERTWRIGHT_ADMIN_SECRET');
    return;
  }
  const file = join(deps.dataDir, INITIAL_ADMIN_FILE);
  await writeFile(file, `${JSON.stringify({ identifier: ADMIN_IDENTIFIER, secret, createdAt: now }, null, 2)}\n`, { mode: 0o600, flag: 'w' });
  // The one place a secret is logged, on purpose and once: the operator needs it to log in.
  deps.logger.warn(
    { identifier: ADMIN_IDENTIFIER, file },
    `created the local account "administrator" with the generated secret ${secret} — also in ${file} (mode 0600); change it and delete the file`,
  );
}
