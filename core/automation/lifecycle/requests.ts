import type { Knex } from 'knex';

/**
 * The two reads of the requests table the lifecycle task needs beyond the request store's own (by id): how a
 * certificate was issued, and which requests of a profile have waited too long.
 */

/** The plan of the completed request that issued a certificate (its mode and CSR), if the platform issued it. */
export async function issuingRequestPlan(knex: Knex, tenant: string, certificateId: string): Promise<{ mode?: string; csr?: string } | null> {
  const row = (await knex('requests')
    .where({ tenant, certificate_id: certificateId, status: 'completed' })
    .whereIn('workflow', ['enroll', 'renew'])
    .orderBy('last_modification_date', 'desc')
    .first('requested_x509_data')) as { requested_x509_data: string | null } | undefined;
  if (!row?.requested_x509_data) return null;
  try {
    return JSON.parse(row.requested_x509_data) as { mode?: string; csr?: string };
  } catch {
    return null;
  }
}

/** Ids of the profile's requests pending since before `before` (epoch ms), oldest first. */
export async function stalePendingRequests(knex: Knex, tenant: string, profile: string, before: number, limit: number): Promise<string[]> {
  const rows = (await knex('requests').where({ tenant, profile, status: 'pending' }).where('registration_date', '<', before).orderBy('registration_date').limit(limit).select('id')) as { id: string }[];
  return rows.map((r) => r.id);
}
