import { SECRET_MASK, type Trigger } from '../model.js';
import { isObject } from './refuse.js';
import type { HorizonState } from './state.js';

type Json = Record<string, unknown>;

/** The chat channels that are Horizon's groupware webhook kinds (webhook.ts KINDS). */
const CHAT_CHANNELS = ['slack', 'teams', 'mattermost'];
// A literal address (email.ts), and the contact-email tag in any Mustache spelling ({{x}}, {{ x }}, {{{x}}}, {{&x}}).
const ADDRESS = /^[^\s@<>(),;:"{}]+@[^\s@<>(),;:"{}]+$/;
const CONTACT = /^\{\{\{?\s*&?\s*certificate\.contactEmail\s*\}?\}\}$/;

/**
 * An email target's `to`/`cc` as Horizon recipients: a literal address is `static`, the certificate's contact
 * email is `contact` (what email.ts maps `contact` to). An entry may hold several, comma-separated. Other
 * templates have no Horizon recipient kind and are left out of the view (target.to stays the truth).
 */
function recipientsOf(list: unknown): Json[] {
  if (!Array.isArray(list)) return [];
  const parts = list.filter((e): e is string => typeof e === 'string').flatMap((e) => (CONTACT.test(e.trim()) ? [e.trim()] : e.split(/[,;]/).map((p) => p.trim())));
  return parts.flatMap((p) => (CONTACT.test(p) ? [{ type: 'contact' }] : ADDRESS.test(p) ? [{ type: 'static', email: p }] : []));
}

/** A delivery deadline as a Horizon FiniteDuration (duration.ts parses it back to the same milliseconds). */
const durationOf = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} seconds` : `${ms} milliseconds`);

/**
 * The Horizon view of a trigger written in Certwright's shape, so that the vendor's v2 Go SDK decodes it
 * (its TriggerList items require `type` and the type's template): the HorizonState it would have had, had it
 * been written in Horizon's shape, answered through view.ts like a stored one. Derived on every read, never
 * stored: the trigger stays a Certwright trigger, and a PUT that sends this view back unchanged leaves it one
 * (trigger-input.ts: the Horizon side then yields to the Certwright side).
 * - `email` → type email: to/cc as recipients; title and body read from subject and body/html (view.ts);
 *   `from` reads "" (the sender is the SMTP instance's, which a trigger does not name).
 * - `slack`, `teams`, `mattermost` → type webhook: the URL masked (it is sealed), the text as title (its
 *   first line) and body (the rest), as webhook.ts joins them.
 * - `webhook` → type rest: one POST without authentication to target.url, its headers and deadline.
 * - expiring with one threshold: runPeriod "N days".
 * Channels without a Horizon counterpart (`log`, third-party plugin channels) have no view (null) and are
 * answered in Certwright's shape alone, as before: the v2 Go SDK's unfiltered TriggerList still fails on
 * them (with `types`, they are left out).
 */
export function derivedHorizonOf(t: Pick<Trigger, 'channel' | 'target' | 'events' | 'thresholds'>): HorizonState | null {
  const target = t.target;
  const fields: Json = {};
  if (t.events.includes('expiring') && t.thresholds.length === 1) fields.runPeriod = `${t.thresholds[0]} days`;
  if (t.channel === 'email') {
    const cc = recipientsOf(target.cc);
    // Title and body are read back from the target by view.ts (emailTemplateView).
    fields.emailTemplate = { from: '', to: recipientsOf(target.to), ...(cc.length ? { cc } : {}), isHtml: typeof target.html === 'string' };
    return { type: 'email', fields };
  }
  if (CHAT_CHANNELS.includes(t.channel)) {
    const text = typeof target.text === 'string' ? target.text : '';
    const cut = text.indexOf('\n');
    const [title, body] = cut < 0 ? [text, undefined] : [text.slice(0, cut), text.slice(cut + 1)];
    fields.webhookTemplate = { to: { type: 'static', webhook: { type: t.channel, url: SECRET_MASK } }, title, ...(body ? { body } : {}) };
    return { type: 'webhook', fields };
  }
  if (t.channel === 'webhook') {
    const headers = isObject(target.headers) ? Object.entries(target.headers).map(([name, value]) => ({ name, value })) : [];
    const step: Json = {
      url: target.url,
      method: 'POST',
      authenticationType: isObject(target.authentication) ? target.authentication.type : 'noauth',
      ...(isObject(target.authentication) ? { credentials: target.authentication.credentials } : {}),
      ...(headers.length ? { headers } : {}),
      ...(typeof target.timeoutMs === 'number' ? { timeout: durationOf(target.timeoutMs) } : {}),
    };
    fields.sequence = [step];
    return { type: 'rest', fields };
  }
  return null;
}
