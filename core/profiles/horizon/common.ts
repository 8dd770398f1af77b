/**
 * What the Horizon-shape mappings of this folder share: the PRF-002 they refuse with, and the rule for a
 * Horizon setting Certwright has no counterpart for and answers with a fixed value: a client may send that
 * value (or leave it out, or null) — anything else is refused, naming the field and saying why.
 */
import { ProblemError } from '../../errors/index.js';

export const invalid = (detail: string): ProblemError => new ProblemError('PRF-002', { detail });

/** PRF-002 unless `sent` is absent, null, or what Certwright does (`certwright`); empty strings and arrays count as absent. */
export function only(where: string, sent: unknown, certwright: unknown, why: string): void {
  if (sent === undefined || sent === null || sent === '') return;
  if (Array.isArray(sent) && sent.length === 0) return;
  if (sent === certwright) return;
  throw invalid(`${where}: ${JSON.stringify(sent)} is not supported: ${why}`);
}

/** Approvers accept or deny a request as it was made (core/requests approve takes no template). */
export const notEditableByApprover = (where: string, sent: unknown): void =>
  only(`${where}.editableByApprover`, sent, false, 'a Certwright approver cannot edit the request, only approve or deny it (false, or leave it out)');

export type Json = Record<string, unknown>;
