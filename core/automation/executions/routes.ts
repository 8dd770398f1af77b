import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE, ProblemError } from '../../errors/index.js';
import type { ConfigRegistry } from '../../config-objects/registry.js';
import { actorOf } from '../../config-objects/routes.js';
import { collectionAccess } from '../../config-objects/own-routes.js';

export const EXECUTION_POLICY_TYPE = 'execution-policy';
const BASE = '/api/v1/automation/executions/';
const READ = 'configuration:automation:read';
const TAGS = ['automation'];

/**
 * The routes of execution policies. They are the registry's standard set (same validation, problems,
 * events and reference rules: registry.list/read/create/update/remove) except where the spec's four
 * detailed operations and its error table say otherwise, which the standard set cannot give (hence
 * `routes: 'own'`):
 *
 * - interface-spec "Detailed operations", automation.execution.list: "200 returns a JSON array of
 *   ExecutionPolicyResponse" and "204 (no body) is returned when no execution policy is defined or the caller
 *   has insufficient permissions" (also "Errors" rule 1). The list is open to any authenticated principal;
 *   a caller without configuration:automation:read gets 204, never 403.
 * - "Errors", SecAuth001 row ("401 … execution add/update. Also 500 on execution list/add/update") and rule 2
 *   ("The execution list operation does not list SecAuth001 among its 401 errors. SecAuth001 appears there as
 *   a 500 instead"): a list without credentials answers SEC-AUTH-001 with status 500; add and update answer
 *   it as every route does, 401.
 * - "Errors", ExecutionPolicy001 (500: list, add, update), ExecutionPolicy002 (400: add, update),
 *   ExecutionPolicy004 (400: add only) → EXECUTION-POLICY-001/-002/-004 (core/automation/errors.ts). The
 *   400s of add and update are those two only: a body that is not JSON, or missing ("The request body is
 *   required JSON of shape ExecutionPolicy"), is -002 too; a failure of the store is -001.
 * - add → 201 ExecutionPolicyResponse, update → 200 ExecutionPolicyResponse (404 -003 for an unknown name:
 *   "Other outcomes: … 404"; the spec does not show its body, rule 4). GET :name and DELETE :name are the
 *   standard set's (the spec shows no detail of them).
 */
export function mountExecutionPolicyRoutes(app: FastifyInstance, registry: ConfigRegistry): void {
  const t = registry.get(EXECUTION_POLICY_TYPE);
  if (!t) throw new Error('the execution-policy type must be declared before its routes are mounted');
  const access = collectionAccess('automation');
  const view = { ...t.viewSchema, additionalProperties: true };
  const params = { type: 'object', required: ['name'], properties: { name: { type: 'string', description: "The execution policy's name" } } };
  const noFastifyValidation = () => () => true;

  app.get(BASE, {
    config: { capability: 'configuration', access: 'authenticated' },
    errorHandler: listErrors,
    schema: {
      tags: TAGS,
      summary: 'List execution policies (204, no body, when there is none or the caller may not read them)',
      description: 'Spec automation.execution.list. Without credentials: SEC-AUTH-001 with status 500 (spec "Errors" rule 2).',
      response: { 200: { type: 'array', items: view }, 204: { type: 'null' } },
    },
    handler: async (request, reply) => {
      if (!request.principal!.permissions.allows(READ)) return reply.code(204).send();
      const list = await storeCall(request, () => registry.list(EXECUTION_POLICY_TYPE, request.tenant));
      if (list.length === 0) return reply.code(204).send();
      return list;
    },
  });

  app.get<{ Params: { name: string } }>(`${BASE}:name`, {
    config: access.read,
    validatorCompiler: noFastifyValidation,
    schema: { tags: TAGS, summary: 'Get an execution policy', params, response: { 200: view } },
    handler: (request) => registry.read(EXECUTION_POLICY_TYPE, request.tenant, request.params.name),
  });

  app.post(BASE, {
    config: access.write,
    validatorCompiler: noFastifyValidation,
    errorHandler: writeErrors,
    schema: { tags: TAGS, summary: 'Create an execution policy (spec automation.execution.add)', body: t.inputSchema, response: { 201: view } },
    handler: async (request, reply) =>
      reply.code(201).send(await storeCall(request, () => registry.create(EXECUTION_POLICY_TYPE, request.tenant, request.body, actorOf(request)))),
  });

  app.put(BASE, {
    config: access.write,
    validatorCompiler: noFastifyValidation,
    errorHandler: writeErrors,
    schema: { tags: TAGS, summary: 'Update the execution policy the body names (spec automation.execution.update)', body: t.inputSchema, response: { 200: view } },
    handler: (request) => storeCall(request, () => registry.update(EXECUTION_POLICY_TYPE, request.tenant, request.body, actorOf(request))),
  });

  app.delete<{ Params: { name: string } }>(`${BASE}:name`, {
    config: access.write,
    validatorCompiler: noFastifyValidation,
    schema: { tags: TAGS, summary: 'Delete an execution policy (refused while another object references it)', params, response: { 204: { type: 'null' } } },
    handler: async (request, reply) => {
      await registry.remove(EXECUTION_POLICY_TYPE, request.tenant, request.params.name, actorOf(request));
      return reply.code(204).send();
    },
  });
}

/** A failure of the store (not a problem the registry answers on purpose) is ExecutionPolicy001, 500. */
async function storeCall<T>(request: FastifyRequest, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    request.log.error({ err }, 'execution policy store failure');
    throw new ProblemError('EXECUTION-POLICY-001');
  }
}

/** SecAuth001 on the list: the same code, status 500 (spec "Errors" rule 2). Every other error as usual. */
function listErrors(error: FastifyError, _request: FastifyRequest, _reply: FastifyReply): never {
  if (error instanceof ProblemError && error.code === 'SEC-AUTH-001') {
    const entry = ERROR_CATALOGUE['SEC-AUTH-001'];
    throw new ProblemError('SEC-AUTH-001', {}, { status: 500, title: entry.title, message: entry.message });
  }
  throw error;
}

const PARSE_FAILURES = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY', 'FST_ERR_CTP_INVALID_MEDIA_TYPE', 'FST_ERR_CTP_INVALID_TYPE']);

/** A body that is not JSON, or none, on add/update: ExecutionPolicy002 (the only 400 besides 004 the spec lists). */
function writeErrors(error: FastifyError, _request: FastifyRequest, _reply: FastifyReply): never {
  if (error instanceof ProblemError) throw error;
  if ((error.code !== undefined && PARSE_FAILURES.has(error.code)) || error instanceof SyntaxError || error.statusCode === 415) {
    throw new ProblemError('EXECUTION-POLICY-002', { message: 'The request body is required JSON of shape ExecutionPolicy' });
  }
  throw error;
}
