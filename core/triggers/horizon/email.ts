import { isObject, refused } from './refuse.js';
import type { HorizonMapping } from './state.js';

/** The subtype keys of a Horizon email trigger besides emailTemplate: kept and answered back, not acted on. */
export const EMAIL_OPTION_KEYS = ['ifPkcs12', 'attachPemCertificate', 'attachPemBundle', 'attachDerCertificate', 'attachPkcs7', 'attachPkcs7Bundle', 'attachPkcs12'] as const;

/** Horizon's recipient kinds (its EmailRecipient enum). */
const RECIPIENT_TYPES = ['static', 'team_contact', 'label', 'requester', 'contact', 'approver', 'certificate_rfc822name', 'team_manager', 'team_members', 'certificate_owner', 'lifecycle_operators'];
// The email channel's own address check (plugins/trigger-email), and no Mustache tag in a literal address.
const ADDRESS = /^[^\s@<>(),;:"{}]+@[^\s@<>(),;:"{}]+$/;

/**
 * One Horizon recipient as an entry of the channel's `to`/`cc` (Mustache over the event): a static
 * address as is, `contact` as the certificate's contact email. The other kinds (requester, team
 * manager, …) name people the event does not carry an address for: null, kept in the answer only.
 */
function recipient(r: unknown, field: string): string | null {
  if (!isObject(r) || typeof r.type !== 'string') throw refused(field, 'a recipient is {type, email?, label?}');
  if (!RECIPIENT_TYPES.includes(r.type)) throw refused(`${field}.type`, `"${r.type}" is not one of ${RECIPIENT_TYPES.join(', ')}`);
  if (r.type === 'static') {
    if (typeof r.email !== 'string' || !ADDRESS.test(r.email)) throw refused(`${field}.email`, 'a static recipient needs an email address');
    return r.email;
  }
  if (r.type === 'label' && typeof r.label !== 'string') throw refused(`${field}.label`, 'a label recipient names the label');
  return r.type === 'contact' ? '{{certificate.contactEmail}}' : null;
}

function recipients(list: unknown, field: string): string[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw refused(field, 'a list of recipients');
  return list.map((r, i) => recipient(r, `${field}[${i}]`)).filter((x): x is string => x !== null);
}

/**
 * type "email" → channel `email`: to/cc from the recipients, subject from title, body (or html when
 * isHtml) from body. `from` is kept but the SMTP instance's sender is used; Bcc and custom headers the
 * channel cannot send are refused rather than dropped.
 */
export function emailMapping(body: Record<string, unknown>): HorizonMapping {
  const template = body.emailTemplate;
  if (!isObject(template)) throw refused('emailTemplate', 'an email trigger needs its template {from, to, title, body, isHtml}');
  if (typeof template.from !== 'string' || !template.from.includes('@')) throw refused('emailTemplate.from', 'the sender address is required');
  if (typeof template.title !== 'string' || template.title.trim() === '') throw refused('emailTemplate.title', 'the subject is required');
  if (template.body !== undefined && template.body !== null && typeof template.body !== 'string') throw refused('emailTemplate.body', 'a string');
  if (typeof template.isHtml !== 'boolean') throw refused('emailTemplate.isHtml', 'true or false is required');
  if (!Array.isArray(template.to) || template.to.length === 0) throw refused('emailTemplate.to', 'at least one recipient is required');
  const to = recipients(template.to, 'emailTemplate.to');
  if (to.length === 0) throw refused('emailTemplate.to', 'Certwright mails static addresses and the certificate contact ("contact") only, and none of these recipients is one');
  const cc = recipients(template.cc, 'emailTemplate.cc');
  if (Array.isArray(template.bcc) && template.bcc.length > 0) throw refused('emailTemplate.bcc', 'the email channel sends no Bcc');
  if (Array.isArray(template.headers) && template.headers.length > 0) throw refused('emailTemplate.headers', 'the email channel sets no custom mail headers');

  const text = typeof template.body === 'string' && template.body !== '' ? template.body : undefined;
  const target: Record<string, unknown> = { to, ...(cc.length ? { cc } : {}), subject: template.title, ...(text ? { [template.isHtml ? 'html' : 'body']: text } : {}) };
  // Title and body live in the target (answered from it): not kept twice.
  const { title: _title, body: _body, ...kept } = template;
  const fields: Record<string, unknown> = { emailTemplate: kept };
  for (const key of EMAIL_OPTION_KEYS) if (body[key] !== undefined) fields[key] = body[key];
  return { channel: 'email', target, fields };
}

/** The emailTemplate answered: the kept keys, title and body read back from the target. */
export function emailTemplateView(fields: Record<string, unknown>, target: Record<string, unknown>): Record<string, unknown> {
  const kept = isObject(fields.emailTemplate) ? fields.emailTemplate : {};
  const body = kept.isHtml === true ? target.html : target.body;
  return { ...kept, title: target.subject ?? '', body: typeof body === 'string' ? body : null };
}
