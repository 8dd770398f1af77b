import type { Knex } from 'knex';
import { CERTIFICATE_LANGUAGE } from '../../inventory/language.js';
import { parseQuery, querySource } from '../../query/index.js';
import { earliestRemainingShare, renewalCause, DAY_MS, type AutomationPolicy, type CertificateFacts, type RenewalCause } from './model.js';

const T = CERTIFICATE_LANGUAGE.table;

interface Row {
  id: string;
  not_before: number | string;
  not_after: number | string;
  revoked: number | boolean;
  signing_algorithm: string;
  issuer: string;
}

const factsOf = (r: Row): CertificateFacts => ({
  _id: r.id,
  notBefore: Number(r.not_before),
  notAfter: Number(r.not_after),
  revoked: r.revoked === true || r.revoked === 1,
  signingAlgorithm: r.signing_algorithm,
  issuer: r.issuer,
});

/**
 * The certificates a policy covers (its profile's, narrowed by its HCQL query through the search's query engine)
 * that have not been renewed yet (no `renewed_certificate_id`, which the request workflow writes on a renewal)
 * and have not expired. `due`: only those the database can already tell may be due (renewalCause decides).
 */
export function coveredCertificates(knex: Knex, tenant: string, policy: AutomationPolicy, now: number, options: { due: boolean }): Knex.QueryBuilder {
  const { qb } = querySource(parseQuery(policy.query ?? null, CERTIFICATE_LANGUAGE), CERTIFICATE_LANGUAGE, { knex, now, table: T, tenant }, false);
  qb.where(`${T}.profile`, policy.profile)
    .where(`${T}.not_after`, '>', now)
    .whereNotExists((sub) => sub.select(knex.raw('1')).from('inv_certificate_metadata as m').whereRaw(`m.certificate_id = ${T}.id`).andWhere('m.tenant', tenant).andWhere('m.key', 'renewed_certificate_id'));
  if (!policy.renewOn.includes('revocation')) qb.where(`${T}.revoked`, false);
  if (options.due && !policy.renewOn.includes('noncompliance')) {
    qb.where((w) => {
      if (policy.renewOn.includes('expiry')) {
        const share = earliestRemainingShare(policy);
        if (share === null) w.orWhere(`${T}.not_after`, '<=', now + (policy.renewal.daysBeforeExpiry ?? 30) * DAY_MS);
        else w.orWhereRaw(`${T}.not_after - ? * (${T}.not_after - ${T}.not_before) <= ?`, [share, now]);
      }
      if (policy.renewOn.includes('revocation')) w.orWhere(`${T}.revoked`, true);
    });
  }
  return qb;
}

/** The covered certificates due now, with their cause, oldest expiry first, at most `limit`. */
export async function dueCertificates(knex: Knex, tenant: string, policy: AutomationPolicy, now: number, limit: number): Promise<{ certificate: CertificateFacts; cause: RenewalCause }[]> {
  const rows = (await coveredCertificates(knex, tenant, policy, now, { due: true })
    // Not those the lifecycle task holds or has settled (claims.ts): waiting out a backoff, given up, waiting for an
    // approver, claimed by a live node. They would otherwise fill every batch and starve the rest.
    .whereNotExists((sub) =>
      sub
        .select(knex.raw('1'))
        .from('automation_renewals as r')
        .whereRaw(`r.certificate_id = ${T}.id`)
        .andWhere('r.tenant', tenant)
        .andWhere((w) =>
          w
            .whereIn('r.status', ['given-up', 'requested', 'renewed', 'revoking', 'revoked'])
            .orWhere((f) => f.where('r.status', 'failed').where('r.next_attempt_at', '>', now))
            .orWhere((c) => c.where('r.status', 'claimed').where('r.claimed_until', '>=', now)),
        ),
    )
    .select(`${T}.id`, `${T}.not_before`, `${T}.not_after`, `${T}.revoked`, `${T}.signing_algorithm`, `${T}.issuer`)
    .orderBy(`${T}.not_after`)
    .orderBy(`${T}.id`)
    .limit(limit)) as Row[];
  const out: { certificate: CertificateFacts; cause: RenewalCause }[] = [];
  for (const row of rows) {
    const certificate = factsOf(row);
    const cause = renewalCause(policy, certificate, now);
    if (cause) out.push({ certificate, cause });
  }
  return out;
}

/** Every certificate some automation policy of the tenant covers (the 47-day simulator counts them as automated). */
export async function idsCoveredByPolicies(knex: Knex, tenant: string, policies: readonly AutomationPolicy[], now: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (const policy of policies) {
    const rows = (await coveredCertificates(knex, tenant, policy, now, { due: false }).select(`${T}.id as id`)) as { id: string }[];
    for (const r of rows) out.add(r.id);
  }
  return out;
}
