import type { CoreServices } from '../../services.js';
import type { TriggerEventName } from '../events.js';
import { horizonOf, SECRET_MASK, viewOf, type Trigger } from '../model.js';
import { secretFieldsOf, targetSchemaOf, type TriggerInput } from '../validate.js';
import { certwrightEvents, commonOptions, COMMON_OPTION_KEYS } from './common.js';
import { EMAIL_OPTION_KEYS, emailMapping } from './email.js';
import { refused } from './refuse.js';
import { REST_STEP_KEYS, restMapping, sameJson } from './rest.js';
import { HORIZON_THIRD_PARTY_TYPES, HORIZON_TYPES, type HorizonMapping, type HorizonType } from './state.js';
import { horizonKeysOf } from './view.js';
import { WEBHOOK_OPTION_KEYS, webhookMapping } from './webhook.js';

type Body = Record<string, unknown>;

/** The subtype keys of each supported Horizon type. */
const SUBTYPE_KEYS: Record<HorizonType, readonly string[]> = {
  email: ['emailTemplate', ...EMAIL_OPTION_KEYS],
  webhook: ['webhookTemplate', ...WEBHOOK_OPTION_KEYS],
  rest: ['sequence', ...REST_STEP_KEYS],
};
/** Every key of Horizon's shape that Certwright's shape does not have (`connector`: third-party types). */
export const HORIZON_ONLY_KEYS: readonly string[] = [...new Set([...Object.values(SUBTYPE_KEYS).flat(), ...COMMON_OPTION_KEYS, 'connector'])];
/** Certwright keys a Horizon-shape body derives: a GET→PUT echoes them back, a change to them is refused. */
const DERIVED_KEYS = ['channel', 'target', 'thresholds', 'triggerType'] as const;

/** A body is in Horizon's shape when it names a `type`: Certwright's own shape has none. */
export const isHorizonShape = (body: Body): boolean => body.type !== undefined;

const same = sameJson;

/**
 * A body in Certwright's shape must not carry Horizon-only keys with a value: without `type` they
 * would be dropped without a word.
 */
export function refuseStrayHorizonKeys(body: Body): void {
  const stray = HORIZON_ONLY_KEYS.find((k) => body[k] !== undefined && body[k] !== null);
  if (stray) throw refused(stray, "a key of Horizon's trigger shape: send the trigger's `type` with it, or leave it out");
}

/**
 * A Horizon `type` Certwright has no counterpart for is a TRG-002 naming `field`: the third-party
 * publication types by name, anything else as not one of email, webhook, rest. The routes call it before
 * the schema (a third-party body carries keys of its own, such as `connector`, that the schema does not
 * list), so such a body gets this answer rather than a schema error.
 */
export function refuseUnsupportedType(type: unknown, field = 'type'): asserts type is HorizonType {
  if (typeof type === 'string' && HORIZON_THIRD_PARTY_TYPES.includes(type)) {
    throw refused(field, `"${type}" (a third-party publication trigger) has no counterpart: Certwright has no third-party connectors yet; supported: ${HORIZON_TYPES.join(', ')}`);
  }
  if (typeof type !== 'string' || !(HORIZON_TYPES as readonly string[]).includes(type)) throw refused(field, `one of ${HORIZON_TYPES.join(', ')}`);
}

/**
 * A body in Horizon's shape ({name, type, events, retries, emailTemplate | webhookTemplate |
 * sequence, …}) as a Certwright trigger input: the subtype decides the channel and target, `events`
 * map to Certwright's (horizon/events.ts), `runPeriod` of on_expire is the threshold; description,
 * enabled and query are Certwright keys it may carry too. Channel, target, thresholds and triggerType
 * are derived: when sent as well (a GET→modify→PUT echoes them), they must be what the Horizon keys
 * give or what the trigger shows now, else the client meant to change them and is told how.
 * Everything without a counterpart is refused (TRG-002, the field named first).
 */
export function horizonInput(services: Pick<CoreServices, 'provided' | 'plugins'>, body: Body, current: Trigger | undefined): TriggerInput {
  const type = body.type;
  refuseUnsupportedType(type);
  const horizonType: HorizonType = type;
  for (const key of HORIZON_ONLY_KEYS) {
    if (body[key] === undefined || body[key] === null) continue;
    if (!SUBTYPE_KEYS[horizonType].includes(key) && !(COMMON_OPTION_KEYS as readonly string[]).includes(key)) throw refused(key, `not a key of a ${horizonType} trigger`);
  }

  if (!Array.isArray(body.events) || body.events.length === 0) throw refused('events', `the event the trigger runs on is required (e.g. ["on_enroll"])`);
  const events = [...new Set(certwrightEvents(body.events as string[]))];
  const common = commonOptions(body, events as TriggerEventName[]);
  const secretFields = (channel: string): string[] => secretFieldsOf(targetSchemaOf(services, channel));
  // What the trigger answers now, kept or derived (a trigger written in Certwright's shape: horizon/derived.ts).
  const currentHorizon = current ? horizonOf(current) : null;
  const mapping: HorizonMapping =
    horizonType === 'email'
      ? emailMapping(body)
      : horizonType === 'webhook'
        ? webhookMapping(body, secretFields)
        : restMapping(body, current?.channel === 'webhook' && current.sealedSecrets.secret !== undefined, currentHorizon?.type === 'rest' ? currentHorizon.fields.sequence : undefined);

  // What the trigger will show for the derived keys; a secret kept from the current trigger shows masked too.
  const secrets = secretFields(mapping.channel);
  const kept = current?.channel === mapping.channel ? Object.keys(current.sealedSecrets) : [];
  const shownTarget = { ...mapping.target, ...Object.fromEntries(secrets.filter((f) => mapping.target[f] !== undefined || kept.includes(f)).map((f) => [f, SECRET_MASK])) };
  const derived: Body = { channel: mapping.channel, target: shownTarget, thresholds: common.thresholds, triggerType: 'notification' };
  const shown = current ? viewOf(current) : undefined;
  for (const key of DERIVED_KEYS) {
    if (body[key] === undefined || same(body[key], derived[key]) || (shown && same(body[key], shown[key]))) continue;
    throw refused(key, `derived from the Horizon keys when \`type\` is sent (it would be ${JSON.stringify(derived[key])}): change those, or send the trigger in Certwright's shape, without \`type\``);
  }

  return {
    name: body.name as string,
    description: body.description as string | null | undefined,
    enabled: body.enabled as boolean | undefined,
    query: body.query as string | null | undefined,
    channel: mapping.channel,
    target: mapping.target,
    events,
    thresholds: common.thresholds,
    triggerType: 'notification',
    retries: (body.retries as number | null | undefined) ?? null,
    horizon: { type: horizonType, fields: { ...common.fields, ...mapping.fields } },
  };
}

/** A JSON value without its null (or absent) object keys, at every depth: a client may send null or leave out what it decoded as null. */
const withoutNulls = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(withoutNulls) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null && x !== undefined).map(([k, x]) => [k, withoutNulls(x)])) : v;

/**
 * Whether the Horizon side of a body (`type` and every Horizon-only key) is what a trigger written in
 * Certwright's shape answers now, derived from its channel and target (horizon/derived.ts): the client did
 * not change it (a GET → PUT echoes it, a v2 Go client or horizon-mcp changing retries, events or the
 * Certwright keys sends it back). It then yields to the Certwright side (certwrightSideOf), as a derived key
 * equal to the current one yields to the Horizon side in horizonInput, and the trigger stays in Certwright's
 * shape. `events` and `retries` are shared by both shapes, so not part of either side.
 */
export function horizonSideIsCurrent(body: Body, current: Trigger): boolean {
  if (current.horizon !== null) return false;
  const derived = horizonOf(current);
  if (derived === null) return false;
  const shown = horizonKeysOf(derived, current.target, current.events);
  return ['type', ...HORIZON_ONLY_KEYS].every((key) => same(withoutNulls(body[key] ?? null), withoutNulls(shown[key] ?? null)));
}

/**
 * The Certwright side of a body whose Horizon side is the current one: without the Horizon keys, and with
 * the Certwright keys it leaves out (a client that sent only the Horizon shape back) as the trigger shows them.
 */
export function certwrightSideOf(body: Body, current: Trigger): TriggerInput {
  const shown = viewOf(current);
  const side: Body = Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'type' && !HORIZON_ONLY_KEYS.includes(key)));
  for (const key of DERIVED_KEYS) if (side[key] === undefined) side[key] = shown[key];
  return side as unknown as TriggerInput;
}
