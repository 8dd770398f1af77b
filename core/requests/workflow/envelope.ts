import { ProblemError } from '../../errors/index.js';
import type { Workflow } from '../../profiles/types.js';
import { REQUEST_WORKFLOWS } from '../types.js';

/**
 * What a client sends to template / submit / approve / deny / cancel, read tolerantly (client-compat §2.2,
 * DESIGN "tolerant reader"): unknown and server-owned members ignored, explicit nulls, zeros and empty
 * strings treated as absent, `id` for `_id`, `password` as `{value}` or a bare string, `revocationReason`
 * at the top level or in the template.
 */
export interface Envelope {
  id?: string;
  module?: string;
  workflow?: Workflow;
  profile?: string;
  template: Record<string, unknown>;
  certificateId?: string;
  certificatePem?: string;
  password?: string;
  requesterComment?: string;
  approverComment?: string;
  contact?: string;
  revocationReason?: string;
  dryRun: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** Members of a template that must never reach the requests table (sealed or dropped). */
export const TEMPLATE_SECRETS = ['password', 'privateKey', 'pkcs12'] as const;

export function envelopeOf(body: unknown, code: 'REQ-002' = 'REQ-002'): Envelope {
  const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const rawTemplate = b.template;
  const template = typeof rawTemplate === 'object' && rawTemplate !== null && !Array.isArray(rawTemplate) ? { ...(rawTemplate as Record<string, unknown>) } : {};
  // Old Ansible sends explicit nulls inside the template too.
  for (const [k, v] of Object.entries(template)) if (v === null) delete template[k];
  const workflow = str(b.workflow)?.toLowerCase();
  if (workflow !== undefined && !(REQUEST_WORKFLOWS as readonly string[]).includes(workflow)) {
    throw new ProblemError(code, { message: `Unknown workflow "${workflow}" (enroll, renew, revoke, update, migrate, recover, import)` });
  }
  const rawPassword = b.password;
  const password = str(rawPassword) ?? (typeof rawPassword === 'object' && rawPassword !== null ? str((rawPassword as Record<string, unknown>).value) : undefined);
  const reason = str(b.revocationReason) ?? str(template.revocationReason);
  const out: Envelope = { template, dryRun: b.dryRun === true };
  const set = <K extends keyof Envelope>(key: K, value: Envelope[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('id', str(b._id) ?? str(b.id));
  set('module', str(b.module)?.toLowerCase());
  set('workflow', workflow as Workflow | undefined);
  set('profile', str(b.profile));
  set('certificateId', str(b.certificateId)?.toLowerCase());
  set('certificatePem', str(b.certificatePem));
  set('password', password);
  set('requesterComment', str(b.requesterComment));
  set('approverComment', str(b.approverComment));
  set('contact', str(b.contact));
  set('revocationReason', reason);
  return out;
}

/** The template as stored: secrets removed (they are sealed elsewhere or not kept at all). */
export function storableTemplate(template: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(template)) if (!(TEMPLATE_SECRETS as readonly string[]).some((s) => s.toLowerCase() === k.toLowerCase())) out[k] = v;
  return out;
}

/** RFC 5280 reason names; clients send any casing, and `affiliationchange` as well as `affiliationchanged`. */
const REASONS: Record<string, { rfc: string; upper: string }> = {};
for (const rfc of ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise']) {
  REASONS[rfc.toLowerCase()] = { rfc, upper: rfc.toUpperCase() };
}
REASONS.affiliationchange = REASONS.affiliationchanged!;

/** A revocation reason by any spelling clients use; absent → unspecified; unknown → WEBRA-REVOKE-006. */
export function revocationReasonOf(value: string | undefined): { rfc: string; upper: string } {
  if (value === undefined) return REASONS.unspecified!;
  const found = REASONS[value.replace(/[\s_-]/g, '').toLowerCase()];
  if (!found) throw new ProblemError('WEBRA-REVOKE-006', { message: `Unknown revocation reason "${value}"` });
  return found;
}
