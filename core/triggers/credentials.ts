import type { CredentialsFacade } from '@certwright/sdk';
import { ProblemError } from '../errors/index.js';
import type { CheckedTrigger } from './validate.js';

const KIND = { basic: 'password', bearer: 'raw' } as const;

/**
 * A trigger whose target authenticates with a credential (the webhook channel's `authentication`, Horizon's
 * authenticationType basic/bearer + credentials) must name one that exists and fits: refused at once,
 * the field named, rather than failing at every delivery.
 */
export async function checkTriggerCredentials(credentials: CredentialsFacade, tenant: string, checked: CheckedTrigger, horizon: boolean): Promise<void> {
  const auth = checked.target.authentication as { type?: keyof typeof KIND; credentials?: string } | undefined;
  if (!auth?.type || !auth.credentials) return;
  try {
    await credentials.resolve(auth.credentials, { kind: KIND[auth.type], target: 'trigger', tenant });
  } catch (err) {
    const field = horizon ? 'sequence[0].credentials' : 'target.authentication.credentials';
    throw new ProblemError('TRG-002', { detail: `${field}: ${(err as Error).message}` });
  }
}

/** Triggers naming a credential (`trigger/<name>`): a credential in use cannot be deleted. */
export function triggerCredentialReferrers(knex: import('knex').Knex) {
  return async (tenant: string, name: string, db: import('knex').Knex = knex): Promise<string[]> => {
    // A tenant has tens of triggers, not millions: read their targets and decide on the parsed value.
    const rows = (await db('triggers').where({ tenant }).select('name', 'target')) as { name: string; target: string }[];
    return rows.filter((r) => (JSON.parse(r.target) as { authentication?: { credentials?: string } }).authentication?.credentials === name).map((r) => `trigger/${r.name}`);
  };
}
