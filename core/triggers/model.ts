import type { TriggerEventName } from './events.js';
import type { HorizonState } from './horizon/state.js';
import { derivedHorizonOf } from './horizon/derived.js';
import { horizonKeysOf } from './horizon/view.js';
import { joinTarget, splitTarget } from './stored-extras.js';

export const TRIGGER_TYPES = ['notification', 'thirdparty'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** What is shown in place of a secret target field that is set (and accepted back as "unchanged"). */
export const SECRET_MASK = '********';

/** A trigger as stored: the target without its secrets, the secrets sealed (field → sealed value). */
export interface Trigger {
  id: string;
  tenant: string;
  name: string;
  description: string | null;
  enabled: boolean;
  channel: string;
  target: Record<string, unknown>;
  sealedSecrets: Record<string, string>;
  events: TriggerEventName[];
  thresholds: number[];
  query: string | null;
  triggerType: TriggerType;
  /** Retries after a failed delivery (at most the configured triggers.delivery.retries); null: the configured count. */
  retries: number | null;
  /** What it keeps of Horizon's shape when written in it (answered back beside Certwright's keys). */
  horizon: HorizonState | null;
  /** Seq of its TRIGGER-CREATED event: it reacts to later events only. */
  createdSeq: number;
  createdAt: number;
  updatedAt: number;
}

/**
 * The API shape of a trigger: secret target fields that are set read `********`. `retries` when set;
 * for a trigger written in Horizon's shape also its Horizon keys (`type`, emailTemplate, …), `events`
 * then in Horizon's names (on_enroll, …); so too, derived, for one written in Certwright's shape whose
 * channel has a Horizon counterpart (horizonOf).
 */
export interface TriggerView {
  _id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  channel: string;
  target: Record<string, unknown>;
  events: string[];
  thresholds: number[];
  query: string | null;
  triggerType: TriggerType;
  createdAt: number;
  updatedAt: number;
  retries?: number;
  [horizonKey: string]: unknown;
}

export interface TriggerRow {
  id: string;
  tenant: string;
  name: string;
  description: string | null;
  enabled: number | boolean;
  channel: string;
  target: string;
  target_secrets: string;
  events: string;
  thresholds: string;
  query: string | null;
  trigger_type: string;
  created_seq: number | string;
  created_at: number | string;
  updated_at: number | string;
}

export const triggerOfRow = (r: TriggerRow): Trigger => {
  const { target, extras } = splitTarget(r.target);
  return {
    id: r.id,
    tenant: r.tenant,
    name: r.name,
    description: r.description,
    enabled: Boolean(r.enabled),
    channel: r.channel,
    target,
    sealedSecrets: JSON.parse(r.target_secrets) as Record<string, string>,
    events: JSON.parse(r.events) as TriggerEventName[],
    thresholds: JSON.parse(r.thresholds) as number[],
    query: r.query,
    triggerType: r.trigger_type as TriggerType,
    retries: extras.retries ?? null,
    horizon: extras.horizon ?? null,
    createdSeq: Number(r.created_seq),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
};

export const rowOfTrigger = (t: Trigger): TriggerRow => ({
  id: t.id,
  tenant: t.tenant,
  name: t.name,
  description: t.description,
  enabled: t.enabled,
  channel: t.channel,
  target: joinTarget(t.target, t.retries, t.horizon),
  target_secrets: JSON.stringify(t.sealedSecrets),
  events: JSON.stringify(t.events),
  thresholds: JSON.stringify(t.thresholds),
  query: t.query,
  trigger_type: t.triggerType,
  created_seq: t.createdSeq,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});

/**
 * The Horizon view a trigger answers: what it keeps of Horizon's shape, or for a trigger written in
 * Certwright's shape the view derived from its channel and target (horizon/derived.ts; null for a channel
 * without a Horizon counterpart, such as `log` or a third-party plugin's).
 */
export const horizonOf = (t: Trigger): HorizonState | null => t.horizon ?? derivedHorizonOf(t);

export const viewOf = (t: Trigger): TriggerView => {
  const horizon = horizonOf(t);
  return {
    _id: t.id,
    name: t.name,
    description: t.description,
    enabled: t.enabled,
    channel: t.channel,
    target: { ...t.target, ...Object.fromEntries(Object.keys(t.sealedSecrets).map((k) => [k, SECRET_MASK])) },
    events: t.events,
    thresholds: t.thresholds,
    query: t.query,
    triggerType: t.triggerType,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    ...(t.retries !== null ? { retries: t.retries } : {}),
    // The stored target (not the masked one): the email title and body are read back from it, and it holds no secret.
    ...(horizon ? horizonKeysOf(horizon, t.target, t.events) : {}),
  };
};
