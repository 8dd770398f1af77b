import { isDeepStrictEqual } from 'node:util';
import { ProblemError } from '../../errors/index.js';
import { REPORT_KEYS, REPORT_TASK } from './report/parameters.js';
import type { TaskView } from './service.js';

/**
 * Horizon's scheduled task is flat: a report's fields sit beside name, cron and enabled
 * (horizon-mcp src/tools/config/scheduled-tasks.ts, schemas/scheduled-tasks.schema.ts). Certwright's task keeps
 * a type's fields in `parameters`. Both forms are accepted and answered: Horizon keys map onto `parameters` of
 * a `report` task, and answers carry them flat as well, so a client's GET → change → PUT round trip works in
 * either form.
 */

/** What Horizon's server fills in; clients echo them from a GET (or strip them): ignored on input. */
export const HORIZON_SERVER_KEYS = ['tenant', 'host', 'status', 'lastExecutionDate', 'lastCompletionDate', 'detail', 'executionId'] as const;
/** Horizon's third-party connector task (type thirdparty): no counterpart, refused by name. */
export const HORIZON_THIRDPARTY_KEYS = ['dryRun', 'module', 'profile', 'connector', 'enroll', 'revoke', 'renew'] as const;

const invalid = (message: string) => new ProblemError('SCHED-002', { message });
type Body = Record<string, unknown> & { type: string; parameters?: Record<string, unknown> };

/**
 * The task's parameters from a body in either form. `stored`: the parameters of the task a PUT replaces.
 * A body may carry both forms (a GET answer echoed back): a key that differs between them is taken from the
 * side that changed it, compared with the stored task; changed on both sides differently (or, on create,
 * simply different) it is refused. A flat null is Horizon's "none": the key is left out.
 */
export function parametersOf(body: Body, stored: Record<string, unknown> | undefined): Record<string, unknown> {
  // By its fields, not its type name: a plugin may register a task type of that name, with parameters.
  const thirdParty = HORIZON_THIRDPARTY_KEYS.filter((k) => body[k] !== undefined);
  if (thirdParty.length > 0) throw invalid(`${thirdParty.join(', ')}: Horizon's third-party connector tasks (type thirdparty) are not supported`);
  const flat = REPORT_KEYS.filter((k) => body[k] !== undefined);
  if (flat.length === 0) return body.parameters ?? {};
  if (body.type !== REPORT_TASK) throw invalid(`${flat.join(', ')}: these report fields apply to tasks of type "${REPORT_TASK}" only (this one is "${body.type}")`);
  const given = body.parameters;
  const out: Record<string, unknown> = { ...(given ?? {}) };
  for (const key of flat) {
    const f = body[key] === null ? undefined : body[key];
    if (given === undefined) {
      if (f === undefined) delete out[key];
      else out[key] = f;
      continue;
    }
    const p = given[key];
    if (isDeepStrictEqual(f, p)) continue;
    if (stored !== undefined && isDeepStrictEqual(f, stored[key])) continue; // parameters changed it: kept.
    if (stored !== undefined && isDeepStrictEqual(p, stored[key])) {
      if (f === undefined) delete out[key];
      else out[key] = f; // the flat key changed it.
      continue;
    }
    throw invalid(`${key} and parameters.${key} disagree: send one of them, or the same value in both`);
  }
  return out;
}

/** Horizon's run state (status success|failure|running, lastExecutionDate…) from Certwright's. */
function runState(view: TaskView) {
  const running = view.lastRun !== null && (view.lastFinished === null || view.lastFinished < view.lastRun);
  return {
    status: running ? 'running' : (view.lastResult?.status ?? null),
    lastExecutionDate: view.lastRun,
    lastCompletionDate: view.lastFinished,
    detail: view.lastResult?.summary ?? null,
  };
}

/** An answer: Certwright's task, then Horizon's run state and, for a report, its fields flat. */
export function withHorizonKeys(view: TaskView): TaskView & Record<string, unknown> {
  const out: TaskView & Record<string, unknown> = { ...view, ...runState(view) };
  if (view.type === REPORT_TASK) for (const key of REPORT_KEYS) if (view.parameters[key] !== undefined) out[key] = view.parameters[key];
  return out;
}
