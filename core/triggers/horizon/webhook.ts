import { SECRET_MASK } from '../model.js';
import { parseFiniteDuration as durationMs } from '../../http/finite-duration.js';
import { isObject, refused } from './refuse.js';
import type { HorizonMapping } from './state.js';

/** Subtype keys of a Horizon webhook trigger besides webhookTemplate. */
export const WEBHOOK_OPTION_KEYS = ['proxy', 'timeout'] as const;
/** Horizon's groupware webhook kinds, each a Certwright chat channel of the same name. */
const KINDS = ['slack', 'teams', 'mattermost'];

/**
 * type "webhook" (a groupware message) → channel `slack`, `teams` or `mattermost` (webhook.type), the
 * URL as the channel's url, title and body as its text template. `secretFields` are the channel's
 * sealed target fields: a sealed URL is kept masked in the answered template, as the target shows it.
 * A team's webhook and an HTTP proxy have no counterpart and are refused; `timeout` is kept (the
 * channel instance's deadline applies).
 */
export function webhookMapping(body: Record<string, unknown>, secretFields: (channel: string) => string[]): HorizonMapping {
  const template = body.webhookTemplate;
  if (!isObject(template)) throw refused('webhookTemplate', 'a webhook trigger needs its template {to, title, body}');
  const to = template.to;
  if (!isObject(to)) throw refused('webhookTemplate.to', 'the target {type: "static", webhook: {type, url}} is required');
  if (to.type === 'team') throw refused('webhookTemplate.to.type', '"team" (the webhook of the certificate\'s team) has no counterpart: Certwright teams carry no webhook; use "static"');
  if (to.type !== 'static') throw refused('webhookTemplate.to.type', '"static" is the kind Certwright supports');
  const hook = to.webhook;
  if (!isObject(hook)) throw refused('webhookTemplate.to.webhook', 'a static target needs {type, url}');
  if (typeof hook.type !== 'string' || !KINDS.includes(hook.type)) throw refused('webhookTemplate.to.webhook.type', `one of ${KINDS.join(', ')}`);
  if (typeof hook.url !== 'string' || hook.url === '') throw refused('webhookTemplate.to.webhook.url', 'the webhook URL is required');
  if (typeof template.title !== 'string' || template.title.trim() === '') throw refused('webhookTemplate.title', 'the message title is required');
  if (template.body !== undefined && template.body !== null && typeof template.body !== 'string') throw refused('webhookTemplate.body', 'a string');
  if (body.proxy !== undefined && body.proxy !== null) throw refused('proxy', 'Certwright has no HTTP proxies: the channel connects directly');
  if (body.timeout !== undefined && body.timeout !== null && durationMs(body.timeout) === null) throw refused('timeout', 'a duration such as "30 seconds"');

  const channel = hook.type;
  const text = typeof template.body === 'string' && template.body !== '' ? `${template.title}\n${template.body}` : template.title;
  const url = secretFields(channel).includes('url') ? SECRET_MASK : hook.url;
  const fields: Record<string, unknown> = { webhookTemplate: { ...template, to: { ...to, webhook: { ...hook, url } } } };
  for (const key of WEBHOOK_OPTION_KEYS) if (body[key] !== undefined) fields[key] = body[key];
  return { channel, target: { url: hook.url, text }, fields };
}
