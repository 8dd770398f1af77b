import type { Knex } from 'knex';
import { isGrade, worst, type Grade } from './scale.js';

/**
 * Grades on inventory certificates: the worst grade in inv_certificates.grade (HCQL `grade`, indexed
 * (tenant, grade, id) since migration 0006) and one record per policy in the document's `grades` list (the
 * certificate object's `grades`, migration 0010).
 */
export interface GradeRecord {
  policy: string;
  grade: Grade;
  score: number;
  failed: { ruleset: string; rule: string; grade: Grade; message: string }[];
}

export interface GradedRow {
  id: string;
  pem: string;
  grade: string | null;
  grades: unknown[];
}

const PAGE = 500;

const parseList = (text: unknown): unknown[] => {
  if (typeof text !== 'string' || text === '') return [];
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
};

/** The record of `policy` in a certificate's grades, if any. */
export function recordOf(grades: readonly unknown[], policy: string): GradeRecord | undefined {
  return grades.find((g): g is GradeRecord => typeof g === 'object' && g !== null && (g as GradeRecord).policy === policy && isGrade((g as GradeRecord).grade));
}

/** The grades with `record` in place of its policy's, and the worst grade over them. */
export function withRecord(grades: readonly unknown[], record: GradeRecord): { grades: unknown[]; grade: Grade } {
  const next = [...grades.filter((g) => !(typeof g === 'object' && g !== null && (g as GradeRecord).policy === record.policy)), record];
  const all = next.flatMap((g) => (typeof g === 'object' && g !== null && isGrade((g as GradeRecord).grade) ? [(g as GradeRecord).grade] : []));
  return { grades: next, grade: worst(all) };
}

export class GradeStore {
  constructor(
    private readonly knex: Knex,
    private readonly clock: () => number,
  ) {}

  /** Every certificate of the tenant, a page at a time in id order (a run restarts nowhere: it reads forward). */
  async *pages(tenant: string): AsyncGenerator<GradedRow[]> {
    let after = '';
    for (;;) {
      const rows = (await this.knex('inv_certificates as c')
        .join('inv_certificate_documents as d', function () {
          this.on('d.tenant', '=', 'c.tenant').andOn('d.certificate_id', '=', 'c.id');
        })
        .where('c.tenant', tenant)
        .andWhere('c.id', '>', after)
        .orderBy('c.id')
        .limit(PAGE)
        .select('c.id', 'c.grade', 'd.pem', 'd.grades')) as { id: string; grade: string | null; pem: string; grades: string | null }[];
      if (rows.length === 0) return;
      yield rows.map((r) => ({ id: r.id, pem: r.pem, grade: r.grade, grades: parseList(r.grades) }));
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  async write(tenant: string, id: string, grade: Grade, grades: unknown[]): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('inv_certificates').where({ tenant, id }).update({ grade, updated_at: this.clock() });
      await trx('inv_certificate_documents').where({ tenant, certificate_id: id }).update({ grades: JSON.stringify(grades) });
    });
  }
}
