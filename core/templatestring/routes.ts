import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ProblemError } from '../errors/index.js';
import { evaluateTemplate, lookupsIn, parseTemplate, TemplateError, type Dictionary, type LookupTables, type Mode, type Node, type Value } from './evaluate.js';

/**
 * Where a rule's Lookup calls read datasource records (core/datasources registers it in the container as
 * `templateDatasources`): the permission reading them needs, and the tables of the named datasources.
 */
export interface TemplateDatasources {
  permission: string;
  load(tenant: string, names: readonly string[]): Promise<LookupTables>;
}

interface PlaygroundBody {
  computationRule?: string | null;
  templateString?: string | null;
  template?: string | null;
  dictionary?: Dictionary | null;
  data?: Dictionary | null;
  csr?: string | null;
}

const CODES = { syntax: 'TPL-001', evaluation: 'TPL-002', limit: 'TPL-003' } as const;

/** A TemplateError as the problem the playground (and a profile's submit) answers: its position in the rule. */
export function templateProblem(err: TemplateError, text: string, detail?: string): ProblemError {
  return new ProblemError(CODES[err.kind], { message: err.message, ...(detail ? { detail } : {}), extra: { kind: err.kind, position: err.positionIn(text) } });
}

/**
 * POST /api/v1/templatestring/playground (spec "Configuration capability": Computation rules, POST): evaluates
 * one computation rule or template string against sample data. The body is the vendor's
 * (horizon-go TemplateStringPlaygroundRequest, horizon-mcp's playground calls): `computationRule` (one
 * expression) or `templateString` (text with blocks), and `dictionary` (flat keys → a value or a list);
 * `template` (a template string) and `data` (nested objects) are accepted too. The answer carries the vendor's
 * TemplateStringPlaygroundResponse fields (`computedValueSingle` or `computedValueMulti`, and the
 * `dictionary`) and `value` (null, a string or a list). A rule that does not parse, fails on the data or
 * exceeds a bound is a 400 TPL-001/-002/-003 with `position: {offset, line, column}`.
 *
 * Access: configuration:profiles:read — computation rules are profile configuration, and the playground is
 * where a profile's rules are written. It reads nothing stored but the datasources a rule's Lookup calls
 * name, which need their own read permission too.
 */
export function mountTemplateStringRoutes(app: FastifyInstance): void {
  app.post<{ Body: PlaygroundBody }>('/api/v1/templatestring/playground', {
    config: { capability: 'configuration', access: { permission: 'configuration:profiles:read' }, invalidCode: 'TPL-004' },
    schema: {
      tags: ['templatestring'],
      summary: 'Evaluate a computation rule or a template string against sample data',
      body: {
        type: 'object',
        properties: {
          computationRule: { type: ['string', 'null'], description: 'One expression: Upper({{csr.subject.cn}})' },
          templateString: { type: ['string', 'null'], description: 'Text with {{ }} and [[ ]] blocks: web-{{csr.subject.cn}}' },
          template: { type: ['string', 'null'], description: 'A template string (same as templateString)' },
          dictionary: { type: ['object', 'null'], description: 'Flat entries: {"csr.subject.cn": "a", "csr.san.dnsname": ["a", "b"]}' },
          data: { type: ['object', 'null'], description: 'Nested data: {"csr": {"subject": {"cn": "a"}}}' },
          csr: { type: ['string', 'null'], description: 'Not supported: give the csr.* entries in dictionary' },
        },
      },
      response: {
        200: {
          type: 'object',
          properties: {
            value: { anyOf: [{ type: 'null' }, { type: 'string' }, { type: 'array', items: { type: 'string' } }] },
            computedValueSingle: { type: ['string', 'null'] },
            computedValueMulti: { type: 'array', items: { type: 'string' } },
            dictionary: { type: 'object', additionalProperties: true },
          },
        },
      },
    },
    handler: async (request) => {
      const body = request.body ?? {};
      const given = (['computationRule', 'templateString', 'template'] as const).filter((f) => typeof body[f] === 'string');
      if (given.length !== 1) throw new ProblemError('TPL-004', { detail: given.length === 0 ? 'no computationRule, templateString or template' : `only one of ${given.join(', ')}` });
      if (body.csr != null) throw new ProblemError('TPL-004', { detail: 'csr: not supported; give the csr.* entries (csr.subject.cn, csr.san.dnsname…) in dictionary' });
      const field = given[0]!;
      const text = body[field] as string;
      const mode: Mode = field === 'computationRule' ? 'rule' : 'template';
      const data: Dictionary = { ...(body.data ?? {}), ...(body.dictionary ?? {}) };
      let value: Value;
      try {
        const tree: Node = parseTemplate(text, mode);
        const lookups = await datasourcesFor(request, lookupsIn(tree));
        value = evaluateTemplate(tree, data, lookups ? { lookups } : {});
      } catch (err) {
        if (err instanceof TemplateError) throw templateProblem(err, text, `in ${field}`);
        throw err;
      }
      return {
        value,
        ...(Array.isArray(value) ? { computedValueMulti: value } : { computedValueSingle: value }),
        dictionary: body.dictionary ?? {},
      };
    },
  });
}

/** The tables of the datasources a rule names (none named: none loaded), after checking the caller may read them. */
async function datasourcesFor(request: FastifyRequest, names: string[]): Promise<LookupTables | undefined> {
  if (names.length === 0) return undefined;
  if (!request.diScope.hasRegistration('templateDatasources')) return undefined;
  const source = request.diScope.resolve<TemplateDatasources>('templateDatasources');
  if (!request.principal!.permissions.allows(source.permission)) {
    throw new ProblemError('SEC-PERM-001', { message: `Lookup reads datasources: the principal does not hold ${source.permission}` });
  }
  return source.load(request.tenant, names);
}
