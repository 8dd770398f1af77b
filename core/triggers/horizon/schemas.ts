import { HORIZON_THIRD_PARTY_TYPES, HORIZON_TYPES } from './state.js';
import { HORIZON_TO_CERTWRIGHT } from './events.js';

/**
 * The keys of Horizon's trigger shape (horizon-mcp src/tools/config/schemas/triggers.schema.ts), for
 * the route schemas and so the OpenAPI document. Loose on purpose: horizon/*.ts checks them and names
 * the field in a TRG-002, where a schema error would be HTTP-003 (read as "not found" by the vendor's
 * clients).
 */
const nullableBoolean = { type: ['boolean', 'null'] } as const;
const duration = { type: ['string', 'null'], maxLength: 64, description: 'A Horizon FiniteDuration, e.g. "30 seconds", "30 days"' } as const;
const KEPT = 'Kept and answered back; not acted on';
const REST_TOP =
  'the key of the one request, as in `sequence[0]` (same rules). Sent without `sequence`, the keys make the one-step sequence; sent with it (a GET echoes both), they must say the same or be left as the trigger shows them. Answered for every rest trigger, read from sequence[0] (method POST and authenticationType noauth when the step leaves them out; timeout and expectedHttpCodes null then)';

export const horizonProperties = {
  type: {
    type: 'string',
    description: `Horizon's trigger type. Sent: the body is in Horizon's shape and the Certwright channel, target, thresholds and triggerType derive from it (email → email; webhook → slack, teams or mattermost after webhookTemplate.to.webhook.type; rest → webhook). One of ${HORIZON_TYPES.join(', ')}; ${HORIZON_THIRD_PARTY_TYPES.join(', ')} are refused (TRG-002). Answered for a trigger written in this shape, and, derived from its channel (email; slack, teams, mattermost → webhook; webhook → rest), for one written in Certwright's shape (sent back unchanged with it, the Horizon keys are then ignored); a trigger whose channel has no counterpart (log, a plugin's) answers none.`,
  },
  retries: { type: ['integer', 'null'], minimum: 0, maximum: 1000, description: "Retries after a failed delivery (at most the configuration's triggers.delivery.retries are made); absent or null: the configured count" },
  emailTemplate: {
    type: 'object',
    additionalProperties: true,
    description: `type email: {from, to, cc?, bcc?, title, body?, isHtml, headers?}. to/cc: static addresses and "contact" (the certificate's contact email) are mailed; requester, approver, team_*, label, certificate_* and lifecycle_operators recipients are kept but not mailed (the event carries no address for them), and at least one mailed recipient is required. title → subject, body → body (html when isHtml). from: kept, the SMTP instance's sender is used. bcc and headers are refused.`,
  },
  webhookTemplate: {
    type: 'object',
    additionalProperties: true,
    description: 'type webhook: {to: {type: "static", webhook: {type: slack|teams|mattermost, url}}, title, body?} → that chat channel, url sealed, text = title and body. to.type "team" is refused.',
  },
  sequence: {
    type: 'array',
    maxItems: 20,
    items: { type: 'object', additionalProperties: true },
    description:
      'type rest: one request {url, method: POST, authenticationType: noauth, expectedHttpCodes (2xx only), timeout, headers: [{name, value}], payloadType, payload} → the webhook channel (a signed JSON POST of the event; a signing secret is generated). payloadType and payload are kept but the event JSON is sent. authenticationType basic or bearer takes `credentials` (the name of a password or raw credential, read at each delivery). Several steps, other methods, other authentication types, a named proxy (proxies are chosen by destination) and templates in the URL or headers are refused. Horizon 2.9 and earlier put the request at the top level (url, method, …, below) instead: either form is accepted, and a rest trigger answers both.',
  },
  url: { type: ['string', 'null'], maxLength: 2048, description: `type rest, the request at the top level (older shape): ${REST_TOP}` },
  method: { type: ['string', 'null'], maxLength: 16, description: `type rest: ${REST_TOP}` },
  authenticationType: { type: ['string', 'null'], maxLength: 32, description: `type rest: ${REST_TOP}` },
  expectedHttpCodes: { type: ['array', 'null'], maxItems: 100, items: { type: 'integer' }, description: `type rest: ${REST_TOP}` },
  headers: { type: ['array', 'null'], maxItems: 100, items: { type: 'object', additionalProperties: true }, description: `type rest: ${REST_TOP}` },
  payloadType: { type: ['string', 'null'], maxLength: 64, description: `type rest: ${REST_TOP}` },
  payload: { type: ['string', 'null'], maxLength: 65536, description: `type rest: ${REST_TOP}` },
  ifPkcs12: { ...nullableBoolean, description: `type email. ${KEPT}` },
  attachPemCertificate: { ...nullableBoolean, description: `type email. ${KEPT} (no attachment is sent)` },
  attachPemBundle: { ...nullableBoolean, description: `type email. ${KEPT}` },
  attachDerCertificate: { ...nullableBoolean, description: `type email. ${KEPT}` },
  attachPkcs7: { ...nullableBoolean, description: `type email. ${KEPT}` },
  attachPkcs7Bundle: { ...nullableBoolean, description: `type email. ${KEPT}` },
  attachPkcs12: { ...nullableBoolean, description: `type email. ${KEPT}` },
  runPeriod: { ...duration, description: 'on_expire: how long before expiry to notify, whole days ("30 days") → thresholds. Refused on other events.' },
  runOnRenewed: { ...nullableBoolean, description: 'on_expire: true is what Certwright does; false is refused' },
  licenceUsagePercent: { type: ['integer', 'null'], description: 'Refused unless null (licence-usage events have no counterpart)' },
  licenseUsagePercent: { type: ['integer', 'null'], description: 'The same, as the v2 Go SDK spells it: refused unless null' },
  triggers: { type: ['object', 'null'], additionalProperties: true, description: '{onTriggerError}: refused unless empty (no trigger chaining)' },
  proxy: { type: ['string', 'null'], description: 'type webhook, or rest at the top level: refused unless null (no HTTP proxies)' },
  timeout: { ...duration, description: `type webhook: ${KEPT} (the channel instance's deadline applies). type rest at the top level: the request's deadline (as in sequence)` },
} as const;

/** Accepted on input only: refused with a TRG-002 naming them rather than as unknown keys. */
export const horizonInputOnlyProperties = {
  connector: { type: ['string', 'null'], description: 'Third-party trigger types only: refused' },
  credentials: { type: ['string', 'null'], description: 'type rest at the top level: refused unless null (Certwright stores no credentials for triggers)' },
  tenant: { type: ['string', 'null'], description: 'Horizon server field: ignored' },
} as const;

export const EVENT_NAMES_DESCRIPTION = `Certwright's event names, or Horizon's for those with a counterpart (${Object.entries(HORIZON_TO_CERTWRIGHT)
  .map(([h, c]) => `${h} = ${c}`)
  .join(', ')}); a trigger written in Horizon's shape answers Horizon's names`;
