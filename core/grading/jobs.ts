import type { Logger } from 'pino';
import type { EventStore } from '../events/store.js';
import { parseCertificatePem } from '../pki/x509/parse.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { explainPolicy, failedRules } from './explain.js';
import { factsOf } from './facts.js';
import { policyNamed } from './policies.js';
import { degraded } from './scale.js';
import { recordOf, withRecord, type GradeRecord, type GradeStore } from './store.js';

/** Grades every certificate of a tenant under one policy (data: tenant, policy, principal). */
export const GRADING_RUN_JOB = 'grading-run';

export interface RunSummary {
  policy: string;
  graded: number;
  changed: number;
  unreadable: number;
}

interface RunData extends Record<string, unknown> {
  tenant: string;
  policy: string;
  principal?: string | null;
}

/**
 * A policy's run as an Agenda job (one node runs it): each certificate is graded, its record for the policy
 * and its worst grade written when they differ from what is stored, and a CERTIFICATE-GRADE-CHANGED event
 * raised when a grade the policy gave before changes (a first grade is no change: it raises nothing, so a
 * first run over a large inventory does not flood the event chain). GRADING-RUN-COMPLETED sums the run up.
 */
export class GradingJobs {
  constructor(
    private readonly scheduler: Scheduler,
    private readonly store: GradeStore,
    private readonly events: EventStore,
    private readonly logger: Logger,
  ) {}

  define(): void {
    this.scheduler.define<RunData>(GRADING_RUN_JOB, async ({ data }) => {
      await this.run(data.tenant, data.policy, data.principal ?? null);
    });
  }

  async queue(tenant: string, policy: string, principal: string | null): Promise<void> {
    await this.scheduler.now(GRADING_RUN_JOB, { tenant, policy, principal }, { tenant });
  }

  async run(tenant: string, policyName: string, principal: string | null): Promise<RunSummary> {
    const policy = policyNamed(policyName);
    const summary: RunSummary = { policy: policyName, graded: 0, changed: 0, unreadable: 0 };
    if (!policy) return summary;
    for await (const page of this.store.pages(tenant)) {
      for (const row of page) {
        let explained;
        try {
          explained = explainPolicy(policy, factsOf(parseCertificatePem(row.pem)), row.id);
        } catch (err) {
          summary.unreadable++;
          this.logger.warn({ certificate: row.id, err: (err as Error).message }, 'grading: certificate not readable');
          continue;
        }
        summary.graded++;
        const record: GradeRecord = { policy: policy.name, grade: explained.grade, score: explained.score, failed: failedRules(explained) };
        const before = recordOf(row.grades, policy.name);
        const next = withRecord(row.grades, record);
        if (before && JSON.stringify(before) === JSON.stringify(record) && row.grade === next.grade) continue;
        await this.store.write(tenant, row.id, next.grade, next.grades);
        if (before && before.grade !== record.grade) {
          summary.changed++;
          await this.events.append({
            tenant,
            code: 'CERTIFICATE-GRADE-CHANGED',
            module: 'grading',
            status: degraded(before.grade, record.grade) ? 'warning' : 'success',
            principal,
            objectType: 'certificate',
            objectId: row.id,
            payload: { policy: policy.name, previous: before.grade, grade: record.grade, failed: record.failed.map((f) => `${f.ruleset}/${f.rule}`) },
          });
        }
      }
    }
    await this.events.append({ tenant, code: 'GRADING-RUN-COMPLETED', module: 'grading', status: 'success', principal, objectType: 'grading-policy', objectId: policy.name, payload: { ...summary } });
    return summary;
  }
}
