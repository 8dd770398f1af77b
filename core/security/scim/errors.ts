import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** RFC 7644 §3.12: the error response's schema and its `scimType` values. */
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_MEDIA_TYPE = 'application/scim+json';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** A failure answered as a SCIM error body (`status` as a string, as RFC 7644 §3.12 shows it). */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly scimType: ScimType | undefined,
    readonly detail: string,
  ) {
    super(detail);
  }

  body(): Record<string, unknown> {
    return { schemas: [ERROR_SCHEMA], status: String(this.status), ...(this.scimType ? { scimType: this.scimType } : {}), detail: this.detail };
  }
}

export const badRequest = (scimType: ScimType, detail: string): ScimError => new ScimError(400, scimType, detail);
export const notFound = (detail: string): ScimError => new ScimError(404, undefined, detail);

export function sendScimError(reply: FastifyReply, error: ScimError): FastifyReply {
  if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="scim"');
  return reply.code(error.status).type(SCIM_MEDIA_TYPE).send(error.body());
}

/**
 * The SCIM scope's error handler: every failure is a SCIM error body, never a stack. What the framework
 * raises before a handler runs (body parsing, schema validation of the query or params) is mapped to the
 * matching status; anything unexpected is logged under the request id and answered 500 without detail.
 */
export function scimErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ScimError) return sendScimError(reply, error);
  // A body of the wrong shape does not conform to the request schema (invalidSyntax); a query or path parameter of the wrong type is a value.
  if (error.validation) return sendScimError(reply, badRequest(error.validationContext === 'body' ? 'invalidSyntax' : 'invalidValue', error.message));
  const status = error.statusCode ?? 500;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return sendScimError(reply, new ScimError(413, undefined, 'The request body is larger than the server accepts'));
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) {
    return sendScimError(reply, new ScimError(415, undefined, `Send the body as ${SCIM_MEDIA_TYPE} (or application/json)`));
  }
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return sendScimError(reply, badRequest('invalidSyntax', 'The request body is empty'));
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || status === 400) {
    return sendScimError(reply, badRequest('invalidSyntax', 'The request body is not valid JSON'));
  }
  if (status >= 400 && status < 500) return sendScimError(reply, new ScimError(status, undefined, 'The request cannot be served'));
  request.log.error({ err: error }, 'SCIM request failed');
  return sendScimError(reply, new ScimError(500, undefined, 'Internal error'));
}
