import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isId } from '../db/ids.js';
import { ProblemError } from '../errors/index.js';
import type { InventoryContext } from '../inventory/index.js';
import { certificateVisible, SEARCH_CERTIFICATES } from '../inventory/search/visibility.js';
import { decodeParam } from '../pki/input.js';
import { acceptMultipart } from '../pki/routes/multipart-body.js';
import { bodyObject } from '../pki/routes/request-body.js';
import type { CertificateInfo } from '../pki/x509/model.js';
import { parseCertificatePem } from '../pki/x509/parse.js';
import { builtinId, explainPolicy, explainRuleset } from './explain.js';
import { factsOf } from './facts.js';
import type { GradingJobs } from './jobs.js';
import { BUILTIN_POLICIES, policyNamed, type GradingPolicy } from './policies.js';
import { en, type GradingRuleset } from './rules.js';
import { BUILTIN_RULESETS, rulesetNamed } from './rulesets.js';
import { explainedPolicySchema, explainedRulesetSchema, policySchema, rulesetSchema } from './schemas.js';

const CAPABILITY = 'configuration' as const;
const READ = { permission: 'configuration:grading:read' } as const;
const WRITE = { permission: 'configuration:grading:write' } as const;
const POLICIES = '/api/v1/certificate/grading/policies';
const RULESETS = '/api/v1/certificate/grading/rulesets';
const tags = ['grading'];
const TEXT_TYPES = ['text/plain', 'application/x-pem-file'];
const BINARY_TYPES = ['application/pkix-cert', 'application/octet-stream'];
const BODY_LIMIT = 256 * 1024;
const FIELDS = ['certificate', 'pem', 'x509', 'id'] as const;
const HINT = 'send {"certificate": "<PEM>"} or {"id": "<_id>"}, a raw PEM/DER body, or a multipart x509 part';

export interface GradingRouteContext {
  inventory: InventoryContext;
  jobs: GradingJobs;
}

const policyView = (p: GradingPolicy) => ({ _id: builtinId('grading-policy', p.name), name: p.name, description: en(p.description), rulesets: p.rulesets.map((r) => ({ ...r })) });
const rulesetView = (r: GradingRuleset) => ({
  _id: builtinId('grading-ruleset', r.name),
  name: r.name,
  description: en(r.description),
  scope: null,
  rules: r.rules.map((rule) => ({ name: rule.name, condition: rule.condition, conditionLanguage: rule.conditionLanguage, description: en(rule.description), scope: null, score: rule.score, grade: rule.grade })),
});

function policyOf(name: string): GradingPolicy {
  const p = policyNamed(name);
  if (!p) throw new ProblemError('GRADING-003', { detail: `no grading policy ${name.slice(0, 128)}` });
  return p;
}
function rulesetOf(name: string): GradingRuleset {
  const r = rulesetNamed(name);
  if (!r) throw new ProblemError('GRADING-003', { detail: `no grading ruleset ${name.slice(0, 128)}` });
  return r;
}

/** A PEM, base64 or DER certificate; an unreadable one is a 400 GRADING-002 with the decoder's reason. */
function decode(input: string | Uint8Array): CertificateInfo {
  try {
    return parseCertificatePem(input);
  } catch (err) {
    if (err instanceof ProblemError) throw new ProblemError('GRADING-002', { detail: `${err.message}${err.detail ? `: ${err.detail}` : ''}` });
    throw err;
  }
}

/**
 * The certificate an explain names: the _id of an inventory certificate the caller may read (its
 * search:certificates permission and filters, as GET /api/v1/certificates/{id}), or a certificate itself.
 */
async function certificateOf(ctx: GradingRouteContext, request: FastifyRequest, input: string | Uint8Array): Promise<{ info: CertificateInfo; certificate: string }> {
  if (typeof input === 'string' && isId(input.trim())) {
    const id = input.trim().toLowerCase();
    if (!request.principal!.permissions.allows(SEARCH_CERTIFICATES)) throw new ProblemError('SEC-PERM-001', { message: `Explaining an inventory certificate requires the permission ${SEARCH_CERTIFICATES}` });
    const found = await ctx.inventory.repository.get(request.tenant, id);
    if (!found || !(await certificateVisible(ctx.inventory, request, id))) throw new ProblemError('GRADING-004', { detail: `no certificate ${id}` });
    return { info: decode(found.certificate), certificate: found.certificate };
  }
  if (typeof input === 'string' && input.trim() === '') throw new ProblemError('GRADING-002', { detail: HINT });
  const info = decode(input);
  return { info, certificate: info.pem };
}

const pathInput = (request: FastifyRequest): string => {
  const params = request.params as { input?: string; '*'?: string };
  return decodeParam(params.input ?? params['*'] ?? '');
};

function bodyInput(body: unknown): string | Uint8Array {
  try {
    return bodyObject(body, FIELDS, HINT, ['x509', 'certificate', 'file']);
  } catch (err) {
    if (err instanceof ProblemError && err.code !== 'GRADING-002') throw new ProblemError('GRADING-002', { detail: err.detail ?? err.message });
    throw err;
  }
}

const nameParams = (name: string) => ({ type: 'object', required: [name], properties: { [name]: { type: 'string', maxLength: 256 } } }) as const;
const explainParams = (name: string) => ({ type: 'object', required: [name, 'input'], properties: { [name]: { type: 'string', maxLength: 256 }, input: { type: 'string', description: 'A URL-encoded PEM (or base64 DER), or the _id of an inventory certificate' } } }) as const;

/**
 * Certificate grading (spec "Configuration capability": Grading policies GET, GET :name, GET :policy/explain/:input,
 * POST :policy/explain, GET :policy/run; Grading rulesets the same without run). Policies and rulesets are the
 * built-in ones (core/grading/policies.ts, rulesets.ts): read-only, as the spec's routes and the vendor's clients
 * have them. Reads and explains need configuration:grading:read (an explain by _id also search:certificates on
 * that certificate); run needs configuration:grading:write and answers 204 once the job is queued.
 */
export async function gradingRoutes(app: FastifyInstance, ctx: GradingRouteContext): Promise<void> {
  app.addContentTypeParser(TEXT_TYPES, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));
  app.addContentTypeParser(BINARY_TYPES, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, new Uint8Array(body as Buffer)));
  acceptMultipart(app, BODY_LIMIT);
  const read = { capability: CAPABILITY, access: READ };

  app.get(`${POLICIES}/`, {
    config: read,
    schema: { tags, summary: 'List the grading policies', response: { 200: { type: 'array', items: policySchema } } },
    handler: async () => BUILTIN_POLICIES.map(policyView),
  });
  app.get<{ Params: { name: string } }>(`${POLICIES}/:name`, {
    config: read,
    schema: { tags, summary: 'Get a grading policy', params: nameParams('name'), response: { 200: policySchema } },
    handler: async (request) => policyView(policyOf(request.params.name)),
  });
  const explainPolicyHandler = (input: (request: FastifyRequest) => string | Uint8Array) => async (request: FastifyRequest) => {
    const policy = policyOf((request.params as { policy: string }).policy);
    const { info, certificate } = await certificateOf(ctx, request, input(request));
    return explainPolicy(policy, factsOf(info), certificate);
  };
  app.get(`${POLICIES}/:policy/explain/:input`, {
    config: read,
    schema: { tags, summary: 'Explain a grading policy on a certificate given in the path (URL-encoded PEM, or an inventory _id)', params: explainParams('policy'), response: { 200: explainedPolicySchema } },
    handler: explainPolicyHandler(pathInput),
  });
  // A PEM whose slashes were not percent-encoded spans several path segments.
  app.get(`${POLICIES}/:policy/explain/*`, { config: read, schema: { hide: true, response: { 200: explainedPolicySchema } }, handler: explainPolicyHandler(pathInput) });
  app.post(`${POLICIES}/:policy/explain`, {
    config: read,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags,
      summary: 'Explain a grading policy on a certificate given in the body',
      description: `Body: {"certificate": PEM} (also pem, x509) or {"id": _id}; a raw PEM or DER body; or multipart/form-data with the part x509 (horizon-go GradingPolicyExplainFile). Answers every rule with pass/fail and why.`,
      params: nameParams('policy'),
      response: { 200: explainedPolicySchema },
    },
    handler: explainPolicyHandler((request) => bodyInput(request.body)),
  });
  app.get<{ Params: { policy: string } }>(`${POLICIES}/:policy/run`, {
    config: { capability: CAPABILITY, access: WRITE },
    schema: { tags, summary: 'Grade the whole inventory with a policy (queued as a job; 204 once queued)', params: nameParams('policy'), response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      const policy = policyOf(request.params.policy);
      await ctx.jobs.queue(request.tenant, policy.name, request.principal?.identifier ?? null);
      return reply.code(204).send();
    },
  });

  app.get(`${RULESETS}/`, {
    config: read,
    schema: { tags, summary: 'List the grading rulesets', response: { 200: { type: 'array', items: rulesetSchema } } },
    handler: async () => BUILTIN_RULESETS.map(rulesetView),
  });
  app.get<{ Params: { name: string } }>(`${RULESETS}/:name`, {
    config: read,
    schema: { tags, summary: 'Get a grading ruleset', params: nameParams('name'), response: { 200: rulesetSchema } },
    handler: async (request) => rulesetView(rulesetOf(request.params.name)),
  });
  const explainRulesetHandler = (input: (request: FastifyRequest) => string | Uint8Array) => async (request: FastifyRequest) => {
    const ruleset = rulesetOf((request.params as { ruleset: string }).ruleset);
    const { info, certificate } = await certificateOf(ctx, request, input(request));
    return { ...explainRuleset(ruleset, factsOf(info)), certificate };
  };
  app.get(`${RULESETS}/:ruleset/explain/:input`, {
    config: read,
    schema: { tags, summary: 'Explain a grading ruleset on a certificate given in the path (URL-encoded PEM, or an inventory _id)', params: explainParams('ruleset'), response: { 200: explainedRulesetSchema } },
    handler: explainRulesetHandler(pathInput),
  });
  app.get(`${RULESETS}/:ruleset/explain/*`, { config: read, schema: { hide: true, response: { 200: explainedRulesetSchema } }, handler: explainRulesetHandler(pathInput) });
  app.post(`${RULESETS}/:ruleset/explain`, {
    config: read,
    bodyLimit: BODY_LIMIT,
    schema: { tags, summary: 'Explain a grading ruleset on a certificate given in the body', description: 'Body as POST …/policies/:policy/explain.', params: nameParams('ruleset'), response: { 200: explainedRulesetSchema } },
    handler: explainRulesetHandler((request) => bodyInput(request.body)),
  });
}
