import { Ajv, type ValidateFunction } from 'ajv';
import { ProblemError } from '../errors/index.js';
import { CERTIFICATE_LANGUAGE } from '../inventory/language.js';
import { parseQuery } from '../query/index.js';
import type { CoreServices } from '../services.js';
import { isTriggerEvent, TRIGGER_EVENT_NAMES, type TriggerEventName } from './events.js';
import { certwrightEvents } from './horizon/common.js';
import type { HorizonState } from './horizon/state.js';
import { SECRET_MASK, TRIGGER_TYPES, type Trigger, type TriggerType } from './model.js';
import { EXTRAS_KEY } from './stored-extras.js';

/**
 * A trigger in Certwright's shape (schema-checked by the route first; a body in Horizon's shape is
 * turned into one by horizon/input.ts, which also sets `horizon`).
 */
export interface TriggerInput {
  name: string;
  description?: string | null;
  enabled?: boolean;
  channel: string;
  target?: Record<string, unknown>;
  /** Certwright's names, or Horizon's (on_enroll, …) for the events that have a counterpart. */
  events: string[];
  thresholds?: number[];
  query?: string | null;
  triggerType?: string;
  retries?: number | null;
  horizon?: HorizonState;
}

/** A trigger checked and ready to store, its secret target fields still in clear (sealed by the repository). */
export interface CheckedTrigger {
  name: string;
  description: string | null;
  enabled: boolean;
  channel: string;
  /** The complete target (secrets included), as the channel will get it. */
  target: Record<string, unknown>;
  /** Names of the target fields the channel's targetSchema marks secret. */
  secretFields: string[];
  events: TriggerEventName[];
  thresholds: number[];
  query: string | null;
  triggerType: TriggerType;
  retries: number | null;
  horizon: HorizonState | null;
}

// Vendor schemas carry annotations of their own (x-secret): allowed, not enforced.
const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: false });
ajv.addKeyword({ keyword: 'x-secret', schemaType: 'boolean' });
const compiled = new WeakMap<object, ValidateFunction>();

/** Names of the top-level target fields a targetSchema marks `"x-secret": true`. */
export function secretFieldsOf(schema: Record<string, unknown> | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, { 'x-secret'?: unknown } | undefined>;
  return Object.entries(props)
    .filter(([, s]) => s?.['x-secret'] === true)
    .map(([name]) => name);
}

/** The manifest's targetSchema of a channel type, if the plugin declares one. */
export function targetSchemaOf(services: Pick<CoreServices, 'provided' | 'plugins'>, channel: string): Record<string, unknown> | undefined {
  const pluginId = services.provided.triggerChannels.pluginOf(channel);
  return pluginId ? services.plugins.manifestOf(pluginId)?.targetSchema : undefined;
}

const invalid = (detail: string): ProblemError => new ProblemError('TRG-002', { detail });

/**
 * Checks a trigger: known channel (TRG-005), known events (TRG-008; a Horizon event without a
 * counterpart TRG-002), thresholds for `expiring`
 * (TRG-002), a query that parses as HCQL (TRG-007), a target that matches the channel's targetSchema
 * and passes its validateTarget (TRG-006). `current` (an update): secret fields the client left out or
 * sent back masked keep their stored value (`openSecret` opens one); `null` clears one.
 */
export function checkTrigger(
  services: Pick<CoreServices, 'provided' | 'plugins'>,
  input: TriggerInput,
  current?: { trigger: Trigger; openSecret: (field: string) => unknown },
): CheckedTrigger {
  const channel = services.provided.triggerChannels.get(input.channel);
  if (!channel) {
    const known = services.provided.triggerChannels.types();
    throw new ProblemError('TRG-005', { detail: `"${input.channel}" is not a trigger channel; installed: ${known.join(', ') || 'none'}` });
  }
  const named = certwrightEvents(input.events);
  const unknown = named.filter((e) => !isTriggerEvent(e));
  if (unknown.length > 0) throw new ProblemError('TRG-008', { detail: `unknown event ${unknown.map((e) => `"${e}"`).join(', ')}; known: ${TRIGGER_EVENT_NAMES.join(', ')}` });
  const events = [...new Set(named)] as TriggerEventName[];
  if (events.length === 0) throw invalid('a trigger handles at least one event');
  const thresholds = [...new Set(input.thresholds ?? [])].sort((a, b) => a - b);
  if (events.includes('expiring') && thresholds.length === 0) throw invalid('an `expiring` trigger needs thresholds (days before expiry)');
  if (!events.includes('expiring') && thresholds.length > 0) throw invalid('thresholds apply to the `expiring` event only');
  const triggerType = (input.triggerType ?? 'notification') as TriggerType;
  if (!TRIGGER_TYPES.includes(triggerType)) throw invalid(`triggerType is one of ${TRIGGER_TYPES.join(', ')}`);
  const query = input.query === undefined || input.query === null || input.query.trim() === '' ? null : input.query;
  if (query !== null) {
    try {
      parseQuery(query, CERTIFICATE_LANGUAGE);
    } catch (err) {
      throw new ProblemError('TRG-007', { detail: err instanceof ProblemError ? (err.detail ?? err.message) : (err as Error).message });
    }
  }

  const schema = targetSchemaOf(services, input.channel);
  const secretFields = secretFieldsOf(schema);
  const target: Record<string, unknown> = { ...(input.target ?? {}) };
  if (EXTRAS_KEY in target) throw new ProblemError('TRG-006', { detail: `target.${EXTRAS_KEY} is reserved` });
  for (const field of secretFields) {
    const sent = target[field];
    const keep = sent === undefined || sent === SECRET_MASK;
    if (sent === null) delete target[field];
    else if (keep) {
      delete target[field];
      // Only the same channel's stored secret carries over.
      if (current && current.trigger.channel === input.channel && current.trigger.sealedSecrets[field] !== undefined) target[field] = current.openSecret(field);
    }
  }
  if (schema) {
    let validate = compiled.get(schema);
    if (!validate) {
      try {
        validate = ajv.compile(schema);
      } catch (err) {
        throw new ProblemError('TRG-006', { detail: `the channel's targetSchema does not compile: ${(err as Error).message}` });
      }
      compiled.set(schema, validate);
    }
    if (!validate(target)) {
      const e = validate.errors![0]!;
      const where = e.instancePath ? `target${e.instancePath.replace(/\//g, '.')}` : 'target';
      throw new ProblemError('TRG-006', { detail: `${where} ${e.message ?? 'is invalid'}` });
    }
  }
  let accepted: boolean;
  try {
    accepted = channel.validateTarget(target);
  } catch (err) {
    throw new ProblemError('TRG-006', { detail: (err as Error).message });
  }
  if (!accepted) throw new ProblemError('TRG-006', { detail: `the ${input.channel} channel refuses this target` });

  return {
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    channel: input.channel,
    target,
    secretFields,
    events,
    thresholds,
    query,
    triggerType,
    retries: input.retries ?? null,
    horizon: input.horizon ?? null,
  };
}
