import type { Knex } from 'knex';
import { isMysql } from '../db/dialect.js';
import { isId } from '../db/ids.js';
import type { CertificateRepository } from './repository.js';
import type { CertificateObject, TriggerResult } from './types.js';

/**
 * Writes the result of a trigger run on a certificate (client-compat §3 `triggerResults`): one entry per
 * (trigger name, event), replaced on each run. The JSON list (inv_certificate_documents.trigger_results)
 * and the facet rows HCQL `trigger.results has success|failure` reads are rewritten together by the
 * repository's update, in one transaction that holds the certificate's row, so two results written at
 * once for one certificate both stay. Answers the updated certificate, or null when it is gone.
 * `trx`: inside the caller's transaction (the delivery's outcome and its result are written together).
 */
export async function recordTriggerResult(
  repository: CertificateRepository,
  tenant: string,
  certificateId: string,
  result: TriggerResult,
  options: { trx?: Knex.Transaction } = {},
): Promise<CertificateObject | null> {
  const id = certificateId.toLowerCase();
  if (!isId(id)) return null;
  const write = async (trx: Knex.Transaction): Promise<CertificateObject | null> => {
    const read = trx('inv_certificates').where({ tenant, id }).first('id');
    if (!(await (isMysql(trx) ? read.forUpdate() : read))) return null;
    const document = (await trx('inv_certificate_documents').where({ tenant, certificate_id: id }).first('trigger_results')) as { trigger_results: string | null } | undefined;
    const current = document?.trigger_results ? (JSON.parse(document.trigger_results) as TriggerResult[]) : [];
    const others = current.filter((r) => !(r.name === result.name && r.event === result.event));
    return repository.update(tenant, id, { triggerResults: [...others, result] }, { trx });
  };
  return options.trx ? write(options.trx) : repository.knex.transaction(write);
}
