import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectionAccess, mountOwnDelete } from '../config-objects/own-routes.js';
import { ProblemError } from '../errors/index.js';
import type { CoreServices } from '../services.js';
import { refuseUnsupportedType } from './horizon/input.js';
import { horizonOf, viewOf, type Trigger } from './model.js';
import type { TriggerRuntime } from './runtime.js';
import { nameParams, triggerInputSchema, triggerListQuery, triggerPatchSchema, triggerSchema } from './schemas.js';
import { testRun, testRunDefinition, triggerTestResultSchema, type TestDictionary } from './test-run.js';
import { checkedTriggerOf } from './trigger-input.js';
import { checkTriggerCredentials } from './credentials.js';

/*
 * Triggers are on the configuration registry (config-type.ts: export/import in Certwright's shape, the
 * cookbook, their credential as a reference), but these routes stay theirs: a trigger is written in
 * Certwright's shape or Horizon's (core/triggers/horizon), answers a Horizon view derived from its channel,
 * and PATCH enables, disables or test-runs them. A trigger written in Horizon's shape is exported in
 * Certwright's (its Horizon keys are not kept across an import).
 */

const BASE = '/api/v1/triggers/';
const ACCESS = collectionAccess('triggers');
const tags = ['triggers'];

type NameParams = { Params: { name: string } };
type TriggerBody = { Body: Record<string, unknown> & { name: string } };
type PatchBody = { Body: { names?: string[]; enabled?: boolean; name?: string; trigger?: Record<string, unknown> & { name: string }; dictionary?: TestDictionary | null } };
type ListQuery = { Querystring: { types?: string[]; module?: string } };
const principalOf = (request: FastifyRequest): string | null => request.principal?.identifier ?? null;

/** Before the schema: a Horizon type without counterpart is TRG-002 whatever other keys its body has (horizon/input.ts). */
const typeOf = (body: unknown): unknown => (body !== null && typeof body === 'object' ? (body as Record<string, unknown>).type : undefined);
const refuseTypeFirst = async (request: FastifyRequest): Promise<void> => {
  const type = typeOf(request.body);
  if (type !== undefined) refuseUnsupportedType(type);
};
const refuseTestTypeFirst = async (request: FastifyRequest): Promise<void> => {
  const type = typeOf(typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>).trigger : undefined);
  if (type !== undefined) refuseUnsupportedType(type, 'trigger.type');
};

/**
 * The `types` filter of the list: Horizon types (repeated `types=email&types=rest` as the v2 Go SDK sends
 * it, or comma-separated), matched against the `type` a trigger answers: kept, or derived from the channel of
 * one written in Certwright's shape (email, rest for webhook, webhook for the chat channels). A trigger whose
 * channel has no Horizon counterpart (log, a plugin's) has no type: asked for types, it is not listed. No
 * `types` (or an empty one): every trigger.
 */
function typesFilter(types: readonly string[] | undefined): ((t: Trigger) => boolean) | null {
  const wanted = new Set((types ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== ''));
  return wanted.size === 0 ? null : (t) => wanted.has(horizonOf(t)?.type ?? '');
}

/**
 * /api/v1/triggers/: the standard set (GET, GET :name, POST, PUT by the name in the body, DELETE :name)
 * plus PATCH on the collection, which enables or disables several triggers at once ({names, enabled})
 * or test-runs one: a stored trigger ({name}) or the one given ({trigger}). POST and PUT take Certwright's
 * shape or Horizon's (trigger-input.ts); GET filters on Horizon's `types`.
 * Reads need configuration:triggers:read, changes and runs configuration:triggers:write; each change
 * writes its event.
 */
export async function triggerRoutes(app: FastifyInstance, options: { services: CoreServices; runtime: TriggerRuntime }): Promise<void> {
  const { services, runtime } = options;
  const repository = runtime.triggers;
  app.addSchema(triggerSchema);
  app.addSchema(triggerTestResultSchema);
  const one = { 200: { $ref: 'Trigger#' } };
  const many = { 200: { type: 'array', items: { $ref: 'Trigger#' } } };

  app.get<ListQuery>(BASE, {
    config: ACCESS.read,
    schema: {
      tags,
      summary: 'List triggers',
      description:
        "Every trigger, by name. `types` (Horizon's TriggerList filter; repeated or comma-separated) keeps the triggers whose `type` is one of them. A trigger written in Certwright's shape answers a `type` derived from its channel (email → email, slack/teams/mattermost → webhook, webhook → rest) with the matching template; one whose channel has no Horizon counterpart (log, a plugin's channel) has none and is left out. `module` is accepted and keeps every trigger: a Certwright trigger is not bound to a module (it runs for the certificates of every module its query lets through).",
      querystring: triggerListQuery,
      response: many,
    },
    handler: async (request) => {
      const keep = typesFilter(request.query.types);
      const triggers = await repository.list(request.tenant);
      return (keep ? triggers.filter(keep) : triggers).map(viewOf);
    },
  });

  app.get<NameParams>(`${BASE}:name`, {
    config: ACCESS.read,
    schema: { tags, summary: 'Get a trigger', params: nameParams, response: one },
    handler: async (request) => viewOf(await repository.get(request.tenant, request.params.name)),
  });

  app.post<TriggerBody>(BASE, {
    config: ACCESS.write,
    preValidation: refuseTypeFirst,
    schema: {
      tags,
      summary: 'Create a trigger',
      description:
        "Certwright's shape {name, channel, target, events, …}, or Horizon's {name, type, events, retries, emailTemplate | webhookTemplate | sequence (or the request's url, method, … at the top level), …} (see `type`). TRG-005 unknown channel, TRG-006 target refused by the channel, TRG-007 query that does not parse, TRG-008 unknown event, TRG-002 other inconsistencies (thresholds) and, in Horizon's shape, every refusal (the field named first in the detail; a third-party type such as aws or akv before anything else in its body), TRG-004 name taken.",
      body: triggerInputSchema,
      response: { 201: { $ref: 'Trigger#' } },
    },
    handler: async (request, reply) => {
      const checked = checkedTriggerOf(services, request.body);
      await checkTriggerCredentials(services.credentials, request.tenant, checked, 'type' in request.body);
      const created = await repository.create(request.tenant, checked, principalOf(request));
      return reply.code(201).send(viewOf(created));
    },
  });

  app.put<TriggerBody>(BASE, {
    config: ACCESS.write,
    preValidation: refuseTypeFirst,
    schema: {
      tags,
      summary: 'Replace the trigger named in the body',
      description:
        "Either shape, as POST. Secret target fields left out or sent back as ******** keep their stored value (for the same channel); null clears one. In Horizon's shape, channel, target, thresholds and triggerType sent back unchanged from a GET are ignored (they derive from the Horizon keys); changed, they are refused. Written in Certwright's shape, a trigger drops its Horizon keys (it then answers the Horizon view derived from its channel, if any). The Horizon keys a trigger written in Certwright's shape answers, sent back unchanged, are ignored: the Certwright keys count and it stays in Certwright's shape; changed, the body counts as Horizon's shape.",
      body: triggerInputSchema,
      response: one,
    },
    handler: async (request) => {
      const current = await repository.get(request.tenant, request.body.name);
      const checked = checkedTriggerOf(services, request.body, { trigger: current, openSecret: (field) => repository.openSecret(current, field) });
      await checkTriggerCredentials(services.credentials, request.tenant, checked, 'type' in request.body);
      return viewOf(await repository.update(request.tenant, checked, principalOf(request)));
    },
  });

  app.patch<PatchBody>(BASE, {
    config: ACCESS.write,
    preValidation: refuseTestTypeFirst,
    schema: {
      tags,
      summary: 'Enable or disable several triggers, or test-run one',
      description:
        "Body `{names: [...], enabled}`: all of them change, or none (TRG-003 names the first unknown one); answers the triggers named. Body `{name}` (Horizon's trigger test, as horizon-mcp simulate_trigger sends it): runs that trigger now for the first event it handles, without a certificate, one attempt even when disabled, recorded as a delivery and a TRIGGER-RUN event; answers the outcome (200 also when the delivery failed: see `status`). Body `{trigger, dictionary?}` (the v2 Go SDK's TriggerTest): runs the trigger given, in either shape, the same way without storing it; it is checked as POST checks it (same codes), and secrets sent masked or left out are those of the stored trigger of that name, if any. `dictionary` ([{key, value}], with either test form) reaches the channel in the test event's payload.dictionary. TRG-003 unknown trigger; TRG-002 two forms at once.",
      body: triggerPatchSchema,
      response: { 200: { anyOf: [many[200], { $ref: 'TriggerTestResult#' }] } },
    },
    handler: async (request) => {
      const { names, enabled, name, trigger, dictionary } = request.body;
      const forms = [names !== undefined || enabled !== undefined, name !== undefined, trigger !== undefined].filter(Boolean).length;
      if (forms > 1) throw new ProblemError('TRG-002', { detail: 'send {names, enabled} to enable or disable triggers, {name} alone to run one, or {trigger} to run the trigger given' });
      if (trigger !== undefined) return testRunDefinition(services, runtime, request.tenant, trigger, principalOf(request), dictionary);
      if (name !== undefined) return testRun(services, runtime, request.tenant, name, principalOf(request), dictionary);
      if (dictionary !== undefined) throw new ProblemError('TRG-002', { detail: 'dictionary goes with a test run ({name} or {trigger})' });
      return (await repository.setEnabled(request.tenant, names!, enabled!, principalOf(request))).map(viewOf);
    },
  });

  mountOwnDelete(app, {
    base: BASE,
    section: 'triggers',
    type: 'trigger',
    tags,
    summary: 'Delete a trigger (its queued deliveries are canceled)',
    params: nameParams,
    remove: (request, name) => repository.remove(request.tenant, name, principalOf(request)),
  });
}
