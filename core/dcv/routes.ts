import type { FastifyInstance } from 'fastify';
import type { EventStore } from '../events/store.js';
import { ProblemError } from '../errors/index.js';
import { configurationPermission } from '../security/permissions/catalogue.js';
import { policyCovers, validatedName, type DcvPolicy } from './config-types.js';
import type { DcvJobs } from './jobs.js';
import type { DcvRunner } from './runner.js';
import type { DcvStates, DomainState } from './state.js';

export interface DcvRouteOptions {
  runner: DcvRunner;
  jobs: DcvJobs;
  states: DcvStates;
  events: EventStore;
  clock: () => number;
  /** Policies of a tenant (the registry's list, secrets closed). */
  policies: (tenant: string) => Promise<DcvPolicy[]>;
}

const BASE = '/api/v1/dcv/lifecycle';
const READ = { permission: configurationPermission('dcv', 'read') } as const;
const WRITE = { permission: configurationPermission('dcv', 'write') } as const;
const tags = ['dcv'];
const config = (access: typeof READ | typeof WRITE) => ({ capability: 'dcv' as const, access });

const stateSchema = {
  type: 'object',
  required: ['domain', 'status', 'validatedUntil', 'lastRunAt', 'lastError', 'attempts'],
  properties: {
    domain: { type: 'string' },
    status: { type: 'string', enum: ['never', 'running', 'validated', 'failed', 'cancelled'] },
    validatedUntil: { type: ['integer', 'null'], description: 'epoch ms: the validation is reusable until then' },
    lastRunAt: { type: ['integer', 'null'] },
    lastError: { type: ['string', 'null'] },
    method: { type: ['string', 'null'] },
    attempts: { type: 'integer' },
  },
} as const;
const policyStateSchema = {
  type: 'object',
  required: ['name', 'enabled', 'provider', 'domains'],
  properties: {
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    provider: { type: 'string' },
    provisioner: { type: 'string' },
    mode: { type: 'string' },
    schedule: { type: ['string', 'null'] },
    domains: { type: 'array', items: stateSchema },
  },
} as const;
const queuedSchema = { type: 'object', required: ['policy', 'queued'], properties: { policy: { type: 'string' }, queued: { type: 'array', items: { type: 'string' } } } } as const;
const NAME_PARAMS = { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 191 } } } as const;
const DOMAIN_PARAMS = { type: 'object', required: ['name', 'domain'], properties: { name: { type: 'string', maxLength: 191 }, domain: { type: 'string', maxLength: 253 } } } as const;
const POLICY_PARAMS = { type: 'object', required: ['policy'], properties: { policy: { type: 'string', maxLength: 191 } } } as const;
const POLICY_DOMAIN_PARAMS = { type: 'object', required: ['policy', 'domain'], properties: { policy: { type: 'string', maxLength: 191 }, domain: { type: 'string', maxLength: 253 } } } as const;
const EVENT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: { enum: ['validated', 'failed'], description: 'What the external system found' },
    validatedUntil: { type: 'integer', description: 'epoch ms (validated: default now + the policy\'s reuseDays)' },
    method: { type: 'string', maxLength: 64 },
    message: { type: 'string', maxLength: 2000, description: 'failed: why' },
  },
} as const;

interface EventBody {
  status: 'validated' | 'failed';
  validatedUntil?: number;
  method?: string;
  message?: string;
}

/**
 * The DCV lifecycle (capability dcv): each policy's state per domain, runs on demand (queued as jobs), the
 * cancelling of queued runs, and validation events an external system reports.
 */
export async function dcvLifecycleRoutes(app: FastifyInstance, opts: DcvRouteOptions): Promise<void> {
  const { runner, jobs, states } = opts;

  const require = async (tenant: string, name: string): Promise<DcvPolicy> => {
    const policy = await runner.policy(tenant, name);
    if (!policy) throw new ProblemError('DCV-003', { message: `No DCV policy is named "${name}"` });
    return policy;
  };
  /** Every domain of the policy, with its state (never run: status never). */
  const stateOf = async (tenant: string, policy: DcvPolicy): Promise<Record<string, unknown>> => {
    const known = new Map((await states.list(tenant, policy.name)).map((s) => [s.domain, s]));
    const names = [...new Set([...policy.domains.map(validatedName), ...known.keys()])].sort();
    const domains: DomainState[] = names.map((domain) => known.get(domain) ?? { domain, status: 'never', validatedUntil: null, lastRunAt: null, lastError: null, method: null, attempts: 0 });
    return { name: policy.name, enabled: policy.enabled, provider: policy.provider, ...(policy.provisioner ? { provisioner: policy.provisioner } : {}), mode: policy.mode, schedule: policy.schedule ?? null, domains };
  };
  const coveredDomain = (policy: DcvPolicy, domain: string): string => {
    const name = domain.replace(/\.$/, '').toLowerCase();
    if (!policyCovers(policy, name)) throw new ProblemError('DCV-005', { message: `The DCV policy "${policy.name}" does not cover ${domain}` });
    return name;
  };

  app.get(`${BASE}/policies/`, {
    config: config(READ),
    schema: { tags, summary: 'Every DCV policy with the state of each of its domains', response: { 200: { type: 'array', items: policyStateSchema } } },
    handler: async (request) => Promise.all((await opts.policies(request.tenant)).map((p) => stateOf(request.tenant, p))),
  });

  app.get<{ Params: { name: string } }>(`${BASE}/policies/:name`, {
    config: config(READ),
    schema: { tags, summary: 'A DCV policy with the state of each of its domains (validated until, last run, last error)', params: NAME_PARAMS, response: { 200: policyStateSchema } },
    handler: async (request) => stateOf(request.tenant, await require(request.tenant, request.params.name)),
  });

  app.post<{ Params: { name: string } }>(`${BASE}/policies/:name/run`, {
    config: config(WRITE),
    schema: { tags, summary: 'Validate every domain of the policy now (queued; a reusable validation is done again)', params: NAME_PARAMS, response: { 202: queuedSchema } },
    handler: async (request, reply) => {
      const policy = await require(request.tenant, request.params.name);
      const queued = await jobs.queue(request.tenant, policy);
      return reply.code(202).send({ policy: policy.name, queued });
    },
  });

  app.post<{ Params: { name: string; domain: string } }>(`${BASE}/policies/:name/run/:domain`, {
    config: config(WRITE),
    schema: { tags, summary: 'Validate one domain of the policy now (queued)', params: DOMAIN_PARAMS, response: { 202: queuedSchema } },
    handler: async (request, reply) => {
      const policy = await require(request.tenant, request.params.name);
      const domain = coveredDomain(policy, request.params.domain);
      const queued = await jobs.queue(request.tenant, policy, { domains: [domain] });
      return reply.code(202).send({ policy: policy.name, queued });
    },
  });

  app.post<{ Params: { name: string } }>(`${BASE}/policies/:name/cancel`, {
    config: config(WRITE),
    schema: {
      tags,
      summary: 'Drop the policy\'s queued runs (a run in progress finishes)',
      params: NAME_PARAMS,
      response: { 200: { type: 'object', required: ['policy', 'cancelled'], properties: { policy: { type: 'string' }, cancelled: { type: 'integer' } } } },
    },
    handler: async (request) => {
      const policy = await require(request.tenant, request.params.name);
      const cancelled = await jobs.cancel(request.tenant, policy.name);
      await opts.events.append({ tenant: request.tenant, code: 'DCV-RUN-CANCELLED', module: 'dcv', status: 'success', principal: request.principal?.identifier ?? null, objectType: 'dcv-policy', objectId: policy.name, payload: { policy: policy.name, cancelled } });
      return { policy: policy.name, cancelled };
    },
  });

  /** An external system's report about one domain, or every domain of the policy. */
  const report = async (tenant: string, principal: string | null, policy: DcvPolicy, domains: string[], body: EventBody): Promise<Record<string, unknown>> => {
    const validatedUntil = body.status === 'validated' ? (body.validatedUntil ?? opts.clock() + policy.reuseDays * 86_400_000) : null;
    for (const domain of domains) {
      await states.report(tenant, policy.name, domain, { status: body.status, validatedUntil, error: body.status === 'failed' ? (body.message ?? 'reported failed') : null, method: body.method ?? 'external' });
      await opts.events.append({
        tenant,
        code: body.status === 'validated' ? 'DCV-VALIDATED' : 'DCV-FAILURE',
        module: 'dcv',
        status: body.status === 'validated' ? 'success' : 'failure',
        principal,
        objectType: 'domain',
        objectId: domain,
        payload: { policy: policy.name, reported: true, method: body.method ?? 'external', ...(validatedUntil ? { validatedUntil } : {}), ...(body.message ? { error: body.message } : {}), final: true },
      });
    }
    return stateOf(tenant, policy);
  };

  app.post<{ Params: { policy: string }; Body: EventBody }>(`${BASE}/events/:policy`, {
    config: config(WRITE),
    schema: { tags, summary: 'An external system reports a validation of every domain of the policy', params: POLICY_PARAMS, body: EVENT_BODY, response: { 200: policyStateSchema } },
    handler: async (request) => {
      const policy = await require(request.tenant, request.params.policy);
      return report(request.tenant, request.principal?.identifier ?? null, policy, [...new Set(policy.domains.map(validatedName))], request.body);
    },
  });

  app.post<{ Params: { policy: string; domain: string }; Body: EventBody }>(`${BASE}/events/:policy/:domain`, {
    config: config(WRITE),
    schema: { tags, summary: 'An external system reports a validation of one domain of the policy', params: POLICY_DOMAIN_PARAMS, body: EVENT_BODY, response: { 200: policyStateSchema } },
    handler: async (request) => {
      const policy = await require(request.tenant, request.params.policy);
      return report(request.tenant, request.principal?.identifier ?? null, policy, [coveredDomain(policy, request.params.domain)], request.body);
    },
  });
}
