import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { CertwrightConfig } from '../config/index.js';
import { problemSchema } from '../errors/index.js';
import { lazyChildLogger } from '../log/lazy-child.js';
import type { Authorizer } from './access.js';
import { installRouteGuards } from './route-guards.js';
import { frameworkErrorHandler, installErrorHandling } from './error-handler.js';
import type { HostPolicy } from './host-policy.js';
import './route-config.js';
import { cachedValidatorFactory, keepHeaderSchemaLowercasing } from './request-validators.js';
import { cachedSerializerFactory } from './response-serializers.js';

export const API_VERSION = '2.11.0';
export const DEFAULT_TENANT = 'default';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export interface HttpServerOptions {
  config: CertwrightConfig;
  logger: Logger;
  hostPolicy: () => HostPolicy;
  authorizer: () => Authorizer;
}

/**
 * What the vendor's clients depend on (read from their sources; test/compat/ replays their calls): the facts,
 * stated once for every route.
 */
const API_DESCRIPTION = [
  'Certificate lifecycle management, wire-compatible with the EVERTRUST Horizon 2.x API and its clients (the MCP server, the v1 and v2 Go SDKs, the Ansible collection).',
  '',
  '- Authentication: X-API-ID and X-API-KEY headers (names in any case), HTTP Basic, or the PLAY_SESSION cookie with a csrf-token header on state-changing calls.',
  '- JSON answers carry Content-Type exactly application/json (no charset); dates are epoch milliseconds.',
  '- Errors are {error, message, title, status, detail?} as application/problem+json; a caller accepting application/json only, or Go\'s default client with no Accept (v1 Go SDK), gets the same body as application/json.',
  '- Search bodies {query, fields?, sortedBy: [{element, order: Asc|Desc}], pageIndex (1-based), pageSize, withCount?} answer {results, pageIndex, pageSize, hasMore, count?}.',
  '- Decoders take JSON, raw PEM/DER bodies, or multipart/form-data uploads (parts x509, pkcs10, crl, ocsp-response, timestamping-response, file).',
  '- Unknown, null and server-owned fields in request bodies are ignored where clients send them (requests, imports); configuration bodies refuse unknown fields.',
].join('\n');

/**
 * The fastify instance every route hangs on: problem+json errors, the capability gate, access control, exact JSON
 * content types, request ids, and the OpenAPI document built from route schemas.
 */
export async function createHttpServer({ config, logger, hostPolicy, authorizer }: HttpServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: !config.log.requests }),
    bodyLimit: config.server.bodyLimit,
    // fastify accepts a hop count at runtime; its types omit it.
    trustProxy: config.server.trustProxy as boolean | string[],
    routerOptions: { maxParamLength: config.server.maxParamLength, ignoreTrailingSlash: true },
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler(hostPolicy),
    // genReqId decides alone: a client-supplied x-request-id is kept only when it is safe to log.
    requestIdHeader: false,
    genReqId(req) {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Request validators and response serializers compiled once per schema text in this process (tests boot many kernels).
    schemaController: { compilersFactory: { buildValidator: cachedValidatorFactory, buildSerializer: cachedSerializerFactory } },
    ajv: {
      // Reject what a schema forbids instead of silently dropping it; routes that must tolerate
      // unknown fields (client-compat) simply do not forbid them.
      // allowUnionTypes: `type: ['array', 'string', 'null']` is meant (localized texts), not a mistake to warn about at every boot.
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false, allowUnionTypes: true },
    },
  }) as unknown as FastifyInstance;
  keepHeaderSchemaLowercasing(app);

  app.setChildLoggerFactory((parent, bindings, options) => lazyChildLogger(parent as Logger, bindings, options));
  app.decorateRequest('tenant', DEFAULT_TENANT);
  // Only JSON is parsed by default; protocol plugins add their own media types in their scope.
  app.removeContentTypeParser('text/plain');
  app.addSchema(problemSchema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Certwright API', version: API_VERSION, description: API_DESCRIPTION },
      servers: [{ url: 'http://localhost:9000' }],
    },
    // Shared schemas appear in components under their $id (Problem), not def-N.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  installErrorHandling(app);
  installRouteGuards(app, hostPolicy, authorizer);

  // Existing clients compare Content-Type exactly (client-compat §1): no charset on JSON answers.
  app.addHook('onSend', (request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string') {
      if (type.startsWith('application/json;')) reply.header('content-type', 'application/json');
      else if (type.startsWith('application/problem+json;')) reply.header('content-type', 'application/problem+json');
    }
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  return app;
}
